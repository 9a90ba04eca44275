import { existsSync } from 'node:fs';
import { blockedHosts, blockedLine, readEgress } from '../../egress/report.js';
import { UserError } from '../../errors.js';
import { UNKNOWN_TESTS_LINE } from '../../fingerprint/fingerprint.js';
import { runPaths } from '../../layout.js';
import type { Decider } from '../../ports/decider.js';
import { oneLine } from '../../text/model.js';
import { JsonlDecisionSink } from '../jsonl-sink.js';
import { runtimeFor } from '../runtime.js';
import { sayOnce } from '../trust.js';
import { explainDetention } from './explain.js';
import { failingTests, readDetention } from './run-reader.js';

export interface WhyOptions {
  repo: string;
  /** The repository root (for git), when inside one. */
  root: string | null;
  ticket: string;
  decider: Decider;
  /** CHALK_DECIDER: with `off` the decider is not asked, and its absence is not worth a warning. */
  mode?: string;
  /** CHALK_DECIDER_THRESHOLD is for acting; a statement is shown at the thinker's selection threshold. */
  threshold?: number;
  env?: NodeJS.ProcessEnv;
  out: (line: string) => void;
  warn: (line: string) => void;
}

const pct = (p: number) => p.toFixed(2);

/** Destinations the run's sandbox was refused, with what would allow each (io/egress.jsonl). */
function blockedLines(path: string): string[] {
  const blocked = blockedHosts(readEgress(path));
  const shown = blocked.slice(0, 10).map((b) => `  egress: ${blockedLine(b)}`);
  return blocked.length > 10 ? [...shown, `  egress: and ${blocked.length - 10} more (${path})`] : shown;
}

/**
 * `chalk why`: explains a detention without a Claude call. A decision thinker
 * over the run's artifacts selects the statements that explain the stop; they
 * are printed with their selection confidence, and every decision is recorded
 * in the run's `io/decisions.jsonl`. Without a decider (untrusted, down), it
 * says why once and prints the detention facts alone (the recorded first
 * error, the failing tests, the branch); with `CHALK_DECIDER=off` it prints
 * them without asking and without a warning. Returns the exit code.
 */
export async function runWhy(o: WhyOptions): Promise<number> {
  const paths = runPaths(o.repo, o.ticket, o.env);
  if (!existsSync(paths.io)) throw new UserError(`no run of ${o.ticket} in ${paths.dir}: run it first (chalk run)`);
  const facts = await readDetention(paths);
  // The run stopped on a failed rubric (`rubric failed (exit 1)`, `repeat: rubric failed (exit 1)`).
  const rubricFailed = facts?.reason?.includes('rubric failed') === true;
  const header = facts?.reason
    ? `${o.ticket} stopped: ${oneLine(facts.reason)}`
    : `${o.ticket}: no detention recorded in ${paths.detention}`;
  const firstError = typeof facts?.first_error === 'string' ? oneLine(facts.first_error, 500) : '';
  const factsOnly = async (why: string | null) => {
    if (why) sayOnce(why, o.warn);
    o.out(header);
    if (firstError) o.out(`  first error: ${firstError}`);
    const ids = await failingTests(paths);
    for (const id of ids) o.out(`  failing: ${oneLine(id)}`);
    if (ids.length === 0 && rubricFailed) o.out(`  ${UNKNOWN_TESTS_LINE}`);
    for (const l of blockedLines(paths.egress)) o.out(l);
    if (facts?.branch) o.out(`  work parked on ${oneLine(facts.branch)}`);
    return why ? 1 : 0;
  };
  if (o.mode === 'off') return factsOnly(null);
  const refused = o.decider.unavailable();
  if (refused) return factsOnly(`going on without the decider: ${refused}`);
  const runtime = runtimeFor(o.decider);
  let decisions = 0;
  const stopFile = runtime.observe(new JsonlDecisionSink(paths.decisions));
  const stopCount = runtime.observe({ write: () => void decisions++ });
  const stop = () => {
    stopFile();
    stopCount();
  };
  try {
    const { result } = await explainDetention({
      ticket: o.ticket,
      paths,
      repoRoot: o.root,
      asker: runtime,
      ...(o.threshold !== undefined ? { threshold: o.threshold } : {}),
      call: { retries: 1 },
    });
    o.out(header);
    if (firstError) o.out(`  first error: ${firstError}`);
    if (rubricFailed && (await failingTests(paths)).length === 0) o.out(`  ${UNKNOWN_TESTS_LINE}`);
    for (const l of blockedLines(paths.egress)) o.out(l);
    if (result.selected.length === 0) {
      o.out('  the decider selected no statement as the cause');
    } else {
      // Statements are the run's own text (rubric output, test names): one line each.
      for (const s of result.selected) o.out(`  ${pct(s.p)}  ${s.artifact.source}: ${oneLine(s.artifact.text)}`);
    }
    o.out(`(${result.turns.length} turns, ${decisions} decisions; recorded in ${paths.decisions})`);
    return 0;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (/the decision failed/.test(message)) return factsOnly(`going on without the decider: ${message}`);
    throw err;
  } finally {
    stop();
  }
}
