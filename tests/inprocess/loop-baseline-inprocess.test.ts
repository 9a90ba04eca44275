import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { LoopKind } from '../../core/ports/agent.js';
import { BASE_RED_EXIT, ENVIRONMENT_EXIT } from '../../core/run/loop/base-rules.js';
import { type AgentStep, createTestKernel, runTicket, ScriptedAgent } from '../../core/testing/index.js';
import { makeTicketRepo, removeTicketRepos, type TicketRepo } from '../../core/testing/repo.js';

/**
 * The base before any agent call, and only the agent's work in a commit,
 * through the real loop (testing kernel: a sandbox over a temporary directory
 * running the Docker sandbox's own scripts, a scripted agent, an in-memory
 * store, real host git).
 */

/**
 * The rubric: every tests/*.sh must exit 0, each failure printed as pytest's
 * short summary prints it. Like a real test run, it writes a JUnit report and
 * coverage.txt and tidies deps.lock (sorts it, as `go mod tidy` rewrites go.mod).
 */
const CHECK = `status=0; cases=''
for t in tests/*.sh; do
  [ -e "$t" ] || continue
  name=$(basename "$t" .sh)
  if sh "$t" >/dev/null 2>&1; then cases="$cases<testcase classname='tests' name='$name'/>"
  else echo "FAILED $t::$name - AssertionError: $name is not ok"; status=1
    cases="$cases<testcase classname='tests' name='$name'><failure message='no'/></testcase>"
  fi
done
printf '<testsuites><testsuite name="t">%s</testsuite></testsuites>\\n' "$cases" > test-report.xml
echo "covered" > coverage.txt
[ -f deps.lock ] && sort -o deps.lock deps.lock
exit $status
`;
const BROKEN = 'tests/broken.sh::broken';

afterAll(removeTicketRepos);

const SPEC = '# PROJ-1: the work\n\n- [ ] step 1\n';
const TICKED = '# PROJ-1: the work\n\n- [x] step 1\n';

function repo(files: Record<string, string>, config: Record<string, string> = {}): TicketRepo {
  return makeTicketRepo({
    ticket: 'PROJ-1',
    spec: SPEC,
    prefix: 'chalk-base-',
    files: { 'check.sh': CHECK, 'deps.lock': 'b\na\n', '.gitignore': 'node_modules/\n', ...files },
    env: { CHALK_TEST_CMD: 'sh check.sh', CHALK_MAX_RETRIES: '0', ...config },
  });
}

type LoopStep = AgentStep<LoopKind>;
/**
 * A loop that runs the rubric itself (as agents do: its report and coverage are the rubric's,
 * never the agent's work), then adds feature.txt with a passing test, writes its own deps.lock
 * (which the loop's rubric sorts) and ticks the checkpoint.
 */
const featureLoop =
  (extra: Record<string, string> = {}): LoopStep =>
  async (c) => {
    await c.exec('sh check.sh >/dev/null || true');
    await c.write('feature.txt', 'done\n');
    await c.write('tests/feature.sh', 'test -f feature.txt\n');
    for (const [p, text] of Object.entries(extra)) await c.write(p, text);
    await c.write('deps.lock', 'b\na\nc\n');
    await c.write('specs/PROJ-1.md', TICKED);
    return { answer: { status: 'done', summary: 'added feature.txt' }, costUsd: 0.1 };
  };
const reviewPass: AgentStep<'review'> = () => ({ answer: { verdict: 'pass', summary: 'Fine.', findings: [] } });

async function run(r: TicketRepo, agent: ScriptedAgent) {
  const t = await createTestKernel({ root: r.root, env: r.env, agent });
  const result = await runTicket(t.deps(), { root: r.root });
  return { t, result, log: t.log.text() };
}

describe('the base before any agent call, in-process', { timeout: 60_000 }, () => {
  it('a red base stops the run before any agent call with one line and the two ways on; the next run reads the cache', async () => {
    const r = repo({ 'tests/broken.sh': 'exit 1\n', 'tests/ok.sh': 'exit 0\n' });
    const agent = new ScriptedAgent();
    const first = await run(r, agent);
    expect(first.result.exitCode, first.log).toBe(BASE_RED_EXIT);
    expect(agent.calls).toEqual([]);
    const line = first.log.split('\n').find((l) => l.includes('is red before any agent call')) ?? '';
    expect(line).toMatch(
      /the base [0-9a-f]{12} is red before any agent call: 1 test fail \(tests\/broken\.sh::broken\)/,
    );
    expect(line).toContain('fix the base branch, or set CHALK_BASELINE=known');
    const { paths } = first.result.ctx;
    expect(readFileSync(paths.baseRubricLog, 'utf8')).toContain(`FAILED ${BROKEN}`);
    // The second run finds it in the host's cache: the rubric does not run on the base again.
    const second = await run(r, new ScriptedAgent());
    expect(second.result.exitCode).toBe(BASE_RED_EXIT);
    expect(second.log).not.toContain('running the rubric on the base');
    expect(existsSync(paths.baseRubricLog)).toBe(false);
    // Nothing of the base's run reached the tree: no report, no coverage, deps.lock as committed.
    expect(r.git('status', '--porcelain')).toBe('');
    // Known, still from the cache: what the base's rubric adds is kept out of the agent's commit
    // though it never ran in this sandbox (the agent ran the rubric itself).
    r.env.CHALK_BASELINE = 'known';
    const third = await run(r, new ScriptedAgent().script('continue', featureLoop()).script('review', reviewPass));
    expect(third.result.exitCode, third.log).toBe(0);
    expect(third.log).toContain('(CHALK_BASELINE=known, cached)');
    const files = r.git('ls-tree', '-r', '--name-only', 'HEAD').split('\n');
    expect(files).toContain('feature.txt');
    expect(files).not.toContain('test-report.xml');
    expect(files).not.toContain('coverage.txt');
  });

  it('CHALK_BASELINE=known: a loop that adds no failing test is green; prompts, review and request name the failures there before', async () => {
    const r = repo(
      { 'tests/broken.sh': 'exit 1\n' },
      { CHALK_BASELINE: 'known', CHALK_TEST_REPORT: 'test-report.xml' },
    );
    const agent = new ScriptedAgent().script('continue', featureLoop()).script('review', reviewPass);
    const { t, result, log } = await run(r, agent);
    expect(result.exitCode, log).toBe(0);
    expect(log).toContain(`1 failing test taken as the baseline (CHALK_BASELINE=known`);
    const [loopCall, reviewCall] = agent.calls;
    // The report names it (JUnit: classname::name).
    expect(loopCall?.prompt).toContain(`<failing_before>`);
    expect(loopCall?.prompt).toContain('\ntests::broken\n');
    expect(reviewCall?.prompt).toContain('\ntests::broken\n');
    const body = t.forge.requests[0]?.body ?? '';
    expect(body).toContain('adds no failing test in the sandbox');
    expect(body).toContain('(CHALK_BASELINE=known): `tests::broken`');
    // Only the agent's work is in the commit: its files and its deps.lock, not the rubric's
    // report, coverage or sorting, not even of the rubric the agent ran itself.
    const files = r.git('ls-tree', '-r', '--name-only', 'HEAD').split('\n');
    expect(files).toContain('feature.txt');
    expect(files).not.toContain('test-report.xml');
    expect(files).not.toContain('coverage.txt');
    expect(r.git('show', 'HEAD:deps.lock')).toBe('b\na\nc');
    expect(t.store.callsOf('PROJ-1').map((c) => [c.kind, c.rubricExit, c.progressed])).toEqual([
      ['continue', 1, true],
      ['review', 0, false],
    ]);
  });

  it('CHALK_BASELINE=known: a loop that adds a failing test fails, saying which; chalk why has its first error', async () => {
    const r = repo({ 'tests/broken.sh': 'exit 1\n' }, { CHALK_BASELINE: 'known' });
    const agent = new ScriptedAgent().script('continue', featureLoop({ 'tests/new.sh': 'exit 1\n' }));
    const { t, result, log } = await run(r, agent);
    expect(result.exitCode, log).toBe(3);
    expect(log).toContain("DETENTION: rubric failed (exit 1), adding 1 failing test to the base's: tests/new.sh::new");
    // The detention records the loop's first error, which chalk why prints.
    const facts = JSON.parse(readFileSync(result.ctx.paths.detention, 'utf8'));
    const [row] = t.store.callsOf('PROJ-1');
    expect(facts.first_error).toMatch(/^FAILED tests\/\w+\.sh::\w+ - AssertionError/);
    expect(facts.first_error).toBe(row?.firstError);
  });

  it('runs on where the ticket left its base, not on the ticket: the tree is put back for the loops', async () => {
    const r = repo({ 'tests/broken.sh': 'exit 1\n' }, { CHALK_BASELINE: 'known' });
    // A person's fix on the ticket branch: the base is still red, the ticket is not.
    r.git('rm', '-q', 'tests/broken.sh');
    r.git('commit', '-q', '-m', 'fix the broken test here');
    const agent = new ScriptedAgent().script('continue', featureLoop()).script('review', reviewPass);
    const { t, result, log } = await run(r, agent);
    expect(result.exitCode, log).toBe(0);
    expect(log).toContain(`1 failing test taken as the baseline`);
    // The loop ran on the ticket's tree: no broken test, a green rubric.
    expect(t.store.callsOf('PROJ-1')[0]?.rubricExit).toBe(0);
    expect(r.git('ls-tree', '-r', '--name-only', 'HEAD')).not.toContain('tests/broken.sh');
  });

  it('a rubric that cannot start on the base is the environment, said at once with the missing command', async () => {
    const r = repo({}, { CHALK_TEST_CMD: 'gotest-nowhere ./...' });
    const agent = new ScriptedAgent();
    const { result, log } = await run(r, agent);
    expect(result.exitCode, log).toBe(ENVIRONMENT_EXIT);
    expect(agent.calls).toEqual([]);
    expect(log).toContain(
      "the rubric cannot start: 'gotest-nowhere' is not in the sandbox (bash: line 1: gotest-nowhere: command not found, exit 127); nothing was asked of the agent. Next: put 'gotest-nowhere' in the sandbox image",
    );
  });

  it('a rubric that cannot start after a loop detains at once as environment, never retried, naming the command', async () => {
    const r = repo({ 'run.sh': 'sh check.sh\n' }, { CHALK_TEST_CMD: 'bash run.sh', CHALK_MAX_RETRIES: '2' });
    const breaks: LoopStep = async (c) => {
      await c.write('run.sh', 'toolchain-gone --test\n');
      return { answer: { status: 'done', summary: 'changed the runner' } };
    };
    const agent = new ScriptedAgent().script('continue', breaks);
    const { result, log } = await run(r, agent);
    expect(result.exitCode, log).toBe(3);
    expect(agent.calls).toHaveLength(1);
    expect(log).toMatch(
      /loop 1 \(continue\): agent ok \(\$0\.00, [0-9]+s\), rubric exit 127 in [0-9]+s, 'toolchain-gone' is not in the sandbox/,
    );
    expect(log).not.toContain('failing tests: unknown');
    expect(log).toContain("DETENTION: the rubric cannot start: 'toolchain-gone' is not in the sandbox");
    expect(log).toContain("next: put 'toolchain-gone' in the sandbox image");
  });

  it('off: no base check; a green base is checked once and said', async () => {
    const off = repo({ 'tests/broken.sh': 'exit 1\n' }, { CHALK_BASELINE: 'off' });
    const idle: LoopStep = () => ({ answer: { status: 'done', summary: 'nothing' } });
    const a = await run(off, new ScriptedAgent().script('continue', idle));
    expect(a.result.exitCode, a.log).toBe(3);
    expect(a.log).not.toMatch(/rubric on the base|base [0-9a-f]{12}/);
    const green = repo({ 'tests/ok.sh': 'exit 0\n' });
    const b = await run(green, new ScriptedAgent().script('continue', featureLoop()).script('review', reviewPass));
    expect(b.result.exitCode, b.log).toBe(0);
    expect(b.log).toMatch(/base [0-9a-f]{12}: the rubric passes \([0-9.]+s\)/);
    expect(green.git('show', 'HEAD:deps.lock')).toBe('b\na\nc');
    expect(existsSync(join(green.root, 'coverage.txt'))).toBe(false);
  });
});
