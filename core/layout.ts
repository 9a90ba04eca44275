import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * Where Chalk keeps its per-machine and per-run state: paths only, no I/O.
 * Shared by everything that reads or writes that state (the run loop writes a
 * run's files; `chalk why`, `chalk status`, `chalk logs`, cleanup, plugin and
 * decider trust and the embedded store read or write the rest), so it belongs
 * to none of them. The one rule for the state directory is `stateDir`.
 *
 * ```
 * ${XDG_STATE_HOME:-~/.local/state}/chalk/
 *   decider/trusted                  decider and embedding URLs acknowledged on this machine
 *   decider/installed.json           what `chalk decider up` installed: models, revisions, median (LocalDeciderPaths)
 *   decider/*.pid, *.log, last-used  the local decider, embedding service and idle watcher
 *   decider/hf/                      the models it downloaded (a Hugging Face cache)
 *   plugins/trusted.json             plugins trusted on this machine (core/kernel/plugin-trust.ts)
 *   db/                              the embedded store (core/store/embedded/paths.ts)
 *   <repo>/plans/<EPIC>.json         a fleet's saved plan (core/fleet/plan.ts)
 *   <repo>/fleets/<EPIC>/            a fleet's supervisor (core/fleet/supervisor.ts)
 *     supervisor.pid                 the live supervisor's pid: also its lock (created exclusively)
 *     supervisor.log                 what it did, one line per start, finish and refusal
 *     status.json                    its last snapshot: slots, queue, each workstream (FleetStatus)
 *     stop                           asked to stop (chalk fleet EPIC --stop)
 *   <repo>/runs/<TICKET>/
 *     pid                            live run pid
 *     run.json                       the run record: run id, pid, loops so far, whether it ended (core/run/resume.ts)
 *     fleet                          the epic whose fleet made this ticket (one line)
 *     rejoin                         office hours asked the fleet to run it again (the tutoring branch; core/run/office-hours.ts)
 *     run.log                        output of a --detach run
 *     io/                            wiped at every run start
 *       system.md, prompt.md         system prompt, last loop's prompt
 *       loop.json, loop.err          last loop's CLI result and stderr
 *       rubric.log                   last rubric output
 *       setup.log                    CHALK_SETUP_CMD output
 *       report                       copy of CHALK_TEST_REPORT (any format core/fingerprint/report.ts reads)
 *       detention.json               what the run loop knew when it detained (see DetentionFacts)
 *       decisions.jsonl              one decision record per line (core/decision/record.ts)
 *       out.bundle                   git bundle of new commits
 * ```
 */

/** The machine's Chalk state directory, `${XDG_STATE_HOME:-~/.local/state}/chalk` (an empty XDG_STATE_HOME is unset). */
export function stateDir(env: NodeJS.ProcessEnv = process.env): string {
  const base =
    env.XDG_STATE_HOME && env.XDG_STATE_HOME !== '' ? env.XDG_STATE_HOME : join(homedir(), '.local', 'state');
  return join(base, 'chalk');
}

export function deciderStateDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(stateDir(env), 'decider');
}

/** The acknowledged decider/embedding URLs, one origin per line. */
export function trustedFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(deciderStateDir(env), 'trusted');
}

/**
 * The local decider's files (plugins/decider-local, plugins/embed-local): what `chalk
 * decider up` installed and measured, the two services' and the idle watcher's pid files
 * and logs, the time of the last question, the machine-wide locks (`up`: one copy starts;
 * `ask`: one question at a time) and the downloaded models.
 */
export interface LocalDeciderPaths {
  dir: string;
  installed: string;
  lastUsed: string;
  deciderPid: string;
  embedPid: string;
  watchPid: string;
  deciderLog: string;
  embedLog: string;
  watchLog: string;
  upLock: string;
  askLock: string;
  /** HF_HOME for the downloads and for the services (offline). */
  hfHome: string;
  /** Where `chalk decider up` installs the embedding service's runtime (transformers.js). */
  embedRuntime: string;
}

export function localDeciderPaths(env: NodeJS.ProcessEnv = process.env): LocalDeciderPaths {
  return localDeciderPathsIn(deciderStateDir(env));
}

/** The same paths under a given decider state directory (a detached service is handed it). */
export function localDeciderPathsIn(dir: string): LocalDeciderPaths {
  return {
    dir,
    installed: join(dir, 'installed.json'),
    lastUsed: join(dir, 'last-used'),
    deciderPid: join(dir, 'decider.pid'),
    embedPid: join(dir, 'embed.pid'),
    watchPid: join(dir, 'watch.pid'),
    deciderLog: join(dir, 'decider.log'),
    embedLog: join(dir, 'embed.log'),
    watchLog: join(dir, 'watch.log'),
    upLock: join(dir, 'up.lock'),
    askLock: join(dir, 'ask.lock'),
    hfHome: join(dir, 'hf'),
    embedRuntime: join(dir, 'embed-runtime'),
  };
}

export function repoStateDir(repo: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(stateDir(env), repo);
}

export function runsDir(repo: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(repoStateDir(repo, env), 'runs');
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
  /** The run record (core/run/resume.ts): what a run that ended without an ending had done. Not in io/: it outlives the next start. */
  record: string;
  runLog: string;
  /** The epic whose fleet made the ticket, when one did. */
  fleet: string;
  /** Written by office hours on a fleet's ticket: the supervisor starts it once more (its content is the token it consumes). */
  rejoin: string;
  io: string;
  systemPrompt: string;
  prompt: string;
  loopJson: string;
  loopErr: string;
  rubricLog: string;
  /** The second rubric run's output, when the failed tests were run again (CHALK_RERUN_FAILED). */
  rubricRerunLog: string;
  setupLog: string;
  report: string;
  detention: string;
  decisions: string;
  bundle: string;
}

export function runPaths(repo: string, ticket: string, env: NodeJS.ProcessEnv = process.env): RunPaths {
  const dir = join(runsDir(repo, env), ticket);
  const io = join(dir, 'io');
  return {
    dir,
    pid: join(dir, 'pid'),
    record: join(dir, 'run.json'),
    runLog: join(dir, 'run.log'),
    fleet: join(dir, 'fleet'),
    rejoin: join(dir, 'rejoin'),
    io,
    systemPrompt: join(io, 'system.md'),
    prompt: join(io, 'prompt.md'),
    loopJson: join(io, 'loop.json'),
    loopErr: join(io, 'loop.err'),
    rubricLog: join(io, 'rubric.log'),
    rubricRerunLog: join(io, 'rubric-rerun.log'),
    setupLog: join(io, 'setup.log'),
    report: join(io, 'report'),
    detention: join(io, 'detention.json'),
    decisions: join(io, 'decisions.jsonl'),
    bundle: join(io, 'out.bundle'),
  };
}

/**
 * `io/detention.json`, written by the run loop when it detains (all fields
 * optional to a reader):
 * - `reason`: the log reason, e.g. `rubric failed (exit 1)`
 * - `detail`: the detail printed under it, if any
 * - `branch`: the detention branch, e.g. `detention/SHOP-7-1791171685`
 * - `green`: the commit of the last green loop (the ticket branch's head when detained)
 * - `lesson`: the open lesson's signature
 * - `lesson_id`: its id in the store
 */
export interface DetentionFacts {
  reason?: string;
  detail?: string;
  branch?: string;
  green?: string;
  lesson?: string;
  lesson_id?: number;
}
