import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runPaths } from '../../core/layout.js';
import { repoName } from '../../core/repo/git.js';
import { chalk, scratchRepo, tempDir } from '../helpers/cli.js';

/**
 * `chalk doctor`'s test report line through the real CLI: on a ticket branch it
 * reads the ticket's last rubric log, names the runner it looks like, whether
 * its failing tests could be read, and the report option that runner has.
 */
const fixture = (name: string) =>
  readFileSync(join(import.meta.dirname, '..', 'fixtures', 'fingerprint', name), 'utf8');

async function onTicket(rubricLog: string | null) {
  const root = scratchRepo('doctor-report');
  spawnSync('git', ['checkout', '-q', '-b', 'chalk/PROJ-1'], { cwd: root });
  const env = { XDG_STATE_HOME: join(tempDir(), 'state'), CHALK_PERMISSION_MODE: 'bypass' };
  if (rubricLog !== null) {
    const log = runPaths(await repoName(root), 'PROJ-1', env).rubricLog;
    mkdirSync(dirname(log), { recursive: true });
    writeFileSync(log, rubricLog);
  }
  return { root, env };
}

const reportLine = (out: string) => out.split('\n').filter((l) => l.includes('test report'));

describe('chalk doctor: the test report line', { timeout: 60_000 }, () => {
  it('names the runner of the last rubric log and its report option', async () => {
    const { root, env } = await onTicket(fixture('pytest-v.txt'));
    const r = chalk(['doctor'], { cwd: root, env });
    expect(reportLine(r.stdout)).toEqual([
      expect.stringMatching(
        /^\s*ok\s+test report: none, rubric looks like pytest \(failing tests read from its output\).*pytest --junitxml=test-report.xml, and CHALK_TEST_REPORT=test-report.xml/,
      ),
    ]);
  });

  it('says the failing tests are unknown when the runner is known but names no test', async () => {
    const log =
      '==================================== ERRORS ====================================\nERROR tests/test_app.py - ModuleNotFoundError: No module named app\n';
    const { root, env } = await onTicket(log);
    const [line] = reportLine(chalk(['doctor'], { cwd: root, env }).stdout);
    expect(line).toMatch(/^\s*--\s+test report: none, rubric looks like pytest \(failing tests: unknown\).*--junitxml/);
  });

  it('says so when the log looks like no runner, and when there is no log yet', async () => {
    const a = await onTicket('make: *** [Makefile:3: test] Error 1\n');
    expect(reportLine(chalk(['doctor'], { cwd: a.root, env: a.env }).stdout)[0]).toMatch(
      /^\s*--\s+test report.*looks like no runner Chalk reads: .*CHALK_TEST_REPORT/,
    );
    const b = await onTicket(null);
    expect(reportLine(chalk(['doctor'], { cwd: b.root, env: b.env }).stdout)[0]).toMatch(
      /^\s*--\s+test report.*PROJ-1 has no rubric log yet/,
    );
  });

  it('with CHALK_TEST_REPORT set, names the file', async () => {
    const { root, env } = await onTicket(fixture('pytest-v.txt'));
    const r = chalk(['doctor'], { cwd: root, env: { ...env, CHALK_TEST_REPORT: 'out/junit.xml' } });
    expect(reportLine(r.stdout)).toEqual([
      expect.stringMatching(/^\s*ok\s+test report \(CHALK_TEST_REPORT=out\/junit.xml\)$/),
    ]);
  });
});
