import { join, sep } from 'node:path';
import { stateDir } from './state-dir.cjs';

/**
 * Where Chalk keeps its per-machine and per-run state: paths only, no I/O.
 * Shared by everything that reads or writes that state (the run loop writes a
 * run's files; `chalk why`, `chalk status`, `chalk logs`, cleanup, plugin and
 * decider trust and the embedded store read or write the rest), so it belongs
 * to none of them. The one rule for the state directory is `stateDir` (core/state-dir.cts,
 * CommonJS, so the `chalk` binary finds its code cache with it before any ES module loads).
 *
 * ```
 * ${XDG_STATE_HOME:-~/.local/state}/chalk/
 *   code-cache/light-<KEY>.v8        V8's compiled code of the `chalk status` bundle, dist/cli/light.cjs (cli/code-cache.cts)
 *   decider/trusted                  decider and embedding URLs acknowledged on this machine
 *   decider/…                        the local decider's installation, services and models (plugins/decider-local/paths.ts)
 *   plugins/trusted.json             plugins trusted on this machine (core/kernel/plugin-trust.ts)
 *   db/                              the embedded store (core/store/embedded/paths.ts)
 *     data.pg<N>-<time>/             a data directory `chalk db upgrade` moved, kept until --cleanup
 *   db-engines/pglite-<version>/     an older PGlite `chalk db upgrade` installed (an npm prefix)
 *   <repo>/plans/<EPIC>.json         a fleet's saved plan (core/fleet/plan.ts)
 *   <repo>/baseline/<KEY>.json       the rubric's result on a base commit in an image (core/run/loop/baseline-cache.ts)
 *   <repo>/setup-cache/<KEY>.tar     the state a setup command left, as the sandbox streamed it out (core/setup-cache)
 *   <repo>/setup-cache/<KEY>.json    what it was made from, its size, when it was made and last used
 *   <repo>/fleets/<EPIC>/            a fleet's supervisor (core/fleet/supervisor.ts)
 *     supervisor.pid                 the live supervisor's pid: also its lock (created exclusively)
 *     supervisor.log                 what it did, one line per start, finish and refusal
 *     status.json                    its last snapshot: slots, queue, each workstream (FleetStatus)
 *     stop                           asked to stop (chalk fleet EPIC --stop)
 *   <repo>/runs/<TICKET>/
 *     pid                            live run pid
 *     run.json                       the run record: run id, pid, loops so far, whether it ended (core/run/resume/resume.ts)
 *     fleet                          the epic whose fleet made this ticket (one line)
 *     rejoin                         office hours asked the fleet to run it again (the tutoring branch; core/run/office-hours/office-hours.ts)
 *     run.log                        output of a --detach run
 *     io/                            wiped at every run start
 *       system.md, prompt.md         system prompt, last loop's prompt
 *       loop.json, loop.err          last loop's CLI result and stderr
 *       rubric.log                   last rubric output
 *       setup.log                    CHALK_SETUP_CMD output
 *       base-rubric.log              the rubric's output on the base commit, before any agent call
 *       report                       copy of CHALK_TEST_REPORT (any format core/fingerprint/report.ts reads)
 *       detention.json               what the run loop knew when it detained (see DetentionFacts)
 *       decisions.jsonl              one decision record per line (core/decision/record.ts)
 *       out.bundle                   git bundle of new commits
 * ```
 */

export { stateDir };

export function deciderStateDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(stateDir(env), 'decider');
}

/** The acknowledged decider/embedding URLs, one origin per line. */
export function trustedFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(deciderStateDir(env), 'trusted');
}

export function repoStateDir(repo: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(stateDir(env), repo);
}

/** Where a repository's saved setup states are (core/setup-cache). */
export function setupCacheDir(repo: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(repoStateDir(repo, env), 'setup-cache');
}

export function runsDir(repo: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(repoStateDir(repo, env), 'runs');
}

/** The host's cache of the rubric's results on base commits (core/run/loop/baseline-cache.ts). */
export function baselineDir(repo: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(repoStateDir(repo, env), 'baseline');
}

/** Where an epic's plan is saved. */
export function planPath(repo: string, epic: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(repoStateDir(repo, env), 'plans', `${epic}.json`);
}

export function plansDir(repo: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(repoStateDir(repo, env), 'plans');
}

/** Every path of an epic's fleet supervisor. */
export interface FleetPaths {
  dir: string;
  plan: string;
  pid: string;
  log: string;
  status: string;
  stop: string;
}

export function fleetPaths(repo: string, epic: string, env: NodeJS.ProcessEnv = process.env): FleetPaths {
  const dir = join(repoStateDir(repo, env), 'fleets', epic);
  return {
    dir,
    plan: planPath(repo, epic, env),
    pid: join(dir, 'supervisor.pid'),
    log: join(dir, 'supervisor.log'),
    status: join(dir, 'status.json'),
    stop: join(dir, 'stop'),
  };
}

/** Every path of one ticket's run directory. */
export interface RunPaths {
  dir: string;
  pid: string;
  /** The run record (core/run/resume/resume.ts): what a run that ended without an ending had done. Not in io/: it outlives the next start. */
  record: string;
  runLog: string;
  /** The epic whose fleet made the ticket, when one did. */
  fleet: string;
  /** Written by office hours on a fleet's ticket: the supervisor starts it once more (its content is the token it consumes). */
  rejoin: string;
  /** The commit a green rubric and the review last saw, written at graduation: what `chalk submit` may open a request for. */
  sealed: string;
  io: string;
  systemPrompt: string;
  prompt: string;
  loopJson: string;
  loopErr: string;
  rubricLog: string;
  /** The second rubric run's output, when the failed tests were run again (CHALK_RERUN_FAILED). */
  rubricRerunLog: string;
  setupLog: string;
  /** The rubric's output on the base commit, before any agent call. */
  baseRubricLog: string;
  report: string;
  detention: string;
  decisions: string;
  /** Every connection the sandbox's egress proxy refused: one JSON line per destination and phase. */
  egress: string;
  bundle: string;
}

/**
 * `name` (one fixed path component) in the directory `dir` (already normalized by `join`): the
 * same path `join` gives, without normalizing the whole string again. A run's twenty-odd paths
 * for each ticket `chalk status` lists made node's path normalizer hot enough for V8 to compile
 * it in the background, work the command then waited for before it could exit.
 */
const inDir = (dir: string, name: string): string => (dir.endsWith(sep) ? `${dir}${name}` : `${dir}${sep}${name}`);

export function runPaths(repo: string, ticket: string, env: NodeJS.ProcessEnv = process.env): RunPaths {
  const dir = join(runsDir(repo, env), ticket);
  const io = inDir(dir, 'io');
  return {
    dir,
    pid: inDir(dir, 'pid'),
    record: inDir(dir, 'run.json'),
    runLog: inDir(dir, 'run.log'),
    fleet: inDir(dir, 'fleet'),
    rejoin: inDir(dir, 'rejoin'),
    sealed: inDir(dir, 'sealed'),
    io,
    systemPrompt: inDir(io, 'system.md'),
    prompt: inDir(io, 'prompt.md'),
    loopJson: inDir(io, 'loop.json'),
    loopErr: inDir(io, 'loop.err'),
    rubricLog: inDir(io, 'rubric.log'),
    rubricRerunLog: inDir(io, 'rubric-rerun.log'),
    setupLog: inDir(io, 'setup.log'),
    baseRubricLog: inDir(io, 'base-rubric.log'),
    report: inDir(io, 'report'),
    detention: inDir(io, 'detention.json'),
    decisions: inDir(io, 'decisions.jsonl'),
    egress: inDir(io, 'egress.jsonl'),
    bundle: inDir(io, 'out.bundle'),
  };
}

/**
 * `io/detention.json`, written by the run loop when it detains (all fields
 * optional to a reader):
 * - `reason`: the log reason, e.g. `rubric failed (exit 1)`
 * - `detail`: the detail printed under it, if any
 * - `branch`: the detention branch, e.g. `detention/SHOP-7-1791171685`
 * - `green`: the commit of the last green loop (the ticket branch's head when detained)
 * - `parked`: the detention branch's tip when it was made (`green` when nothing came home)
 * - `lesson`: the open lesson's signature
 * - `lesson_id`: its id in the store
 * - `first_error`: the last loop's first error, as its fingerprint has it (when it had one)
 */
export interface DetentionFacts {
  reason?: string;
  detail?: string;
  branch?: string;
  green?: string;
  /** The detention branch's tip as the run left it: what came after it is the person's. */
  parked?: string;
  lesson?: string;
  lesson_id?: number;
  first_error?: string;
}
