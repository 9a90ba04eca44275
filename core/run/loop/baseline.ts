import { environmentFailure } from '../../fingerprint/environment.js';
import { fingerprintFailure } from '../../fingerprint/fingerprint.js';
import type { LogInput } from '../../fingerprint/log.js';
import { baselineDir } from '../../layout.js';
import { SANDBOX_PATHS } from '../../ports/sandbox.js';
import type { Run } from '../base/run.js';
import {
  type BaseJudgement,
  type BaselineMode,
  type BaseResult,
  chalkFilesIn,
  judgeBase,
  someTests,
} from './base-rules.js';
import { cacheKey, readBaseCache, writeBaseCache } from './baseline-cache.js';
import { rubricSettings, runRubric, TIMEOUT_EXIT } from './rubric.js';

export interface Baseline {
  judgement: BaseJudgement;
  result: BaseResult;
  /** The commit the rubric ran on: where the ticket left its base branch (or the ticket's start). */
  commit: string;
}

/** Whether the ticket's commits since the base touch only `specs/` (Chalk's spec and notes). */
async function onlySpecs(run: Run, base: string): Promise<boolean> {
  const paths = await run.deps.git.changedPaths(run.ctx.root, { from: base, to: run.base }).catch(() => null);
  return paths?.every((p) => p.startsWith('specs/')) ?? false;
}

/** What a rubric run on the base comes to. */
function resultOf(
  r: { exitCode: number; log: LogInput; report: string | null; capped: boolean },
  made: string[],
  gateFiles: readonly string[],
): BaseResult {
  if (r.exitCode === 0 && !r.capped) {
    return { exitCode: 0, tests: null, firstError: '', environment: null, chalkFiles: [], stopped: null, made };
  }
  const fp = fingerprintFailure({ log: r.log, report: r.report, treeId: '', repoDir: SANDBOX_PATHS.repo });
  return {
    exitCode: r.exitCode,
    tests: fp.tests,
    firstError: fp.firstError,
    environment: r.capped ? null : environmentFailure({ exitCode: r.exitCode, log: r.log, tests: fp.tests }),
    chalkFiles: chalkFilesIn(r.log, gateFiles),
    stopped: r.capped ? 'capped' : r.exitCode === TIMEOUT_EXIT ? 'timeout' : null,
    made,
  };
}

/**
 * The rubric once on the base, after the setup and before any agent call
 * (unless `CHALK_BASELINE=off`): on the commit where the ticket left its base
 * branch (checked out in the sandbox over the setup's changes when the ticket
 * has more than its spec on top; put back after), or from the host's cache of
 * that commit in this image. What the run does with a red base is the caller's.
 */
export async function checkBase(run: Run, o: { baseCommit: string | null }): Promise<Baseline | null> {
  const { ctx, deps, log } = run;
  const mode = deps.config.str('CHALK_BASELINE') as BaselineMode;
  if (mode === 'off') return null;
  const commit = o.baseCommit ?? run.base;
  const inPlace = commit === run.base || (await onlySpecs(run, commit));
  const image = (await deps.sandbox.imageId?.().catch(() => null)) || deps.sandbox.image || '';
  const settings = rubricSettings(run);
  const key = cacheKey({
    commit,
    image,
    rubric: settings.command,
    setup: deps.config.str('CHALK_SETUP_CMD'),
    report: settings.reportPath,
  });
  const dir = baselineDir(ctx.repo, deps.env);
  let result = readBaseCache(dir, key, commit);
  const cached = result !== null;
  const started = deps.clock.now().getTime();
  if (result === null) {
    log.info(`running the rubric on the base ${commit.slice(0, 12)} before any agent call`);
    const rubric = await run.work.harness(
      () =>
        runRubric(ctx, run.session, { ...settings, logPath: ctx.paths.baseRubricLog, reportCopy: null }, run.signal),
      inPlace ? {} : { at: (now) => run.session.graftTree({ onto: commit, from: run.base, to: now }) },
    );
    const last = run.work.lastRun();
    result = resultOf(rubric, last ? await run.work.addedIn(last) : [], deps.guardedPaths);
    if (!run.signal?.aborted) writeBaseCache(dir, key, commit, result);
  }
  run.work.madeByBase(result.made);
  const judgement = judgeBase(result, mode);
  const took = cached ? 'cached' : `${((deps.clock.now().getTime() - started) / 1000).toFixed(1)}s`;
  if (judgement.kind === 'green') log.info(`base ${commit.slice(0, 12)}: the rubric passes (${took})`);
  if (judgement.kind === 'known') {
    log.info(
      `base ${commit.slice(0, 12)}: ${judgement.failures.length} failing test${judgement.failures.length === 1 ? '' : 's'} taken as the baseline (CHALK_BASELINE=known, ${took}): ${someTests(judgement.failures)}; a loop is green when it adds none`,
    );
  }
  return { judgement, result, commit };
}
