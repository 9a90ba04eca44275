import type { Fingerprint } from '../../fingerprint/fingerprint.js';
import { judgeFlaky } from '../../fingerprint/flaky.js';
import { selectiveRerun, showsRunner } from '../../fingerprint/rerun.js';
import { SANDBOX_PATHS } from '../../ports/sandbox.js';
import { oneLine } from '../../text/model.js';
import type { Run } from '../base/run.js';
import { type RubricRun, type RubricSettings, runRubric } from './rubric.js';

export interface Rerun {
  /** Tests that failed one run and passed the other, sorted; [] when none. */
  flaky: string[];
  /** The first run's fingerprint without them. */
  fingerprint: Fingerprint;
  /** How long the second run took. */
  ms: number;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * The flaky rerun: the rubric once more on the same tree, running only the
 * failing tests where their runner can select them from the rubric command
 * (core/fingerprint/rerun.ts: pytest node ids, go test -run, cargo's exact
 * filters, vitest files, jest and mocha names), else the rubric whole. What it
 * changes in the tree is put back, like the first run's. A selection that ran
 * nothing passes as well, so only a second run whose output shows its runner
 * judges anything flaky.
 */
export async function rerunFailed(
  run: Run,
  first: { rubric: RubricRun; fingerprint: Fingerprint; settings: RubricSettings; ms: number },
): Promise<Rerun> {
  const { ctx, deps, session } = run;
  const { rubric, fingerprint, settings } = first;
  const known = fingerprint.tests ?? [];
  const selective = selectiveRerun(settings.command, { log: rubric.log, ids: known, report: !!rubric.report });
  const command = selective?.command ?? settings.command;
  const started = deps.clock.now().getTime();
  const again = await run.work.harness(() =>
    runRubric(ctx, session, { ...settings, command, logPath: ctx.paths.rubricRerunLog, reportCopy: null }, run.signal),
  );
  const ms = deps.clock.now().getTime() - started;
  const ran = !selective || again.exitCode !== 0 || showsRunner(again.log, selective.runner);
  const judged = ran
    ? judgeFlaky(fingerprint, { first: rubric, second: again }, SANDBOX_PATHS.repo)
    : { flaky: [], fingerprint };
  const how = selective
    ? `only the ${plural(selective.selected, 'failing test')} (${selective.runner}: ${selective.command})`
    : `whole (${plural(known.length, 'failing test')} known, which no runner can select from this command)`;
  const verdict =
    judged.flaky.length > 0
      ? `flaky, left out of the fingerprint: ${judged.flaky.map((t) => oneLine(t, 200)).join(', ')}`
      : ran
        ? 'no test is flaky'
        : 'its output shows no test run, so none is judged flaky';
  run.log.info(
    `rubric run again on the same tree, ${how}: exit ${again.exitCode}, ${ms} ms (first run ${first.ms} ms); ${verdict}`,
  );
  return { flaky: judged.flaky, fingerprint: judged.fingerprint, ms };
}
