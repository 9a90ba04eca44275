import { readFile } from 'node:fs/promises';
import type { Config } from '../config/config.js';
import { reportAdvice } from '../fingerprint/advice.js';
import type { CheckResult, DoctorCheck } from '../kernel/doctor.js';
import { runPaths } from '../layout.js';
import { currentBranch, repoName, ticketFromBranch } from '../repo/git.js';

/** The most of a rubric log the check reads (its start: runners print their banners early). */
const LOG_MAX = 4 * 1024 * 1024;

async function readStart(path: string): Promise<string | null> {
  try {
    const text = await readFile(path, 'utf8');
    return text.length > LOG_MAX ? text.slice(0, LOG_MAX) : text;
  } catch {
    return null;
  }
}

/**
 * `chalk doctor`'s test report line: with CHALK_TEST_REPORT set, which file;
 * else, from the last rubric log of the current branch's ticket (if any),
 * which runner the rubric looks like, whether its failing tests can be read
 * from the output, and the report option that runner has.
 */
export function testReportCheck(
  config: Config,
  root: string | null,
  env: NodeJS.ProcessEnv = process.env,
): DoctorCheck {
  return {
    id: 'test-report',
    async run(): Promise<CheckResult> {
      const report = config.str('CHALK_TEST_REPORT');
      if (report !== '') return { status: 'ok', label: `test report (CHALK_TEST_REPORT=${report})` };
      const branch = root ? await currentBranch(root) : null;
      const ticket = branch ? ticketFromBranch(branch) : null;
      if (!root || !ticket) {
        return {
          status: '--',
          label: 'test report',
          detail: 'none set; on a ticket branch, its last rubric log tells which runner to configure',
        };
      }
      const paths = runPaths(await repoName(root), ticket, env);
      const log = await readStart(paths.rubricLog);
      if (log === null)
        return { status: '--', label: 'test report', detail: `none set, and ${ticket} has no rubric log yet` };
      const advice = reportAdvice(log);
      if (advice.runners.length === 0) {
        return {
          status: '--',
          label: 'test report',
          detail: `${ticket}'s last rubric log looks like no runner Chalk reads: have the rubric write a JUnit XML report and set CHALK_TEST_REPORT to it`,
        };
      }
      const read = advice.testsRead ? 'failing tests read from its output' : 'failing tests: unknown';
      return {
        status: advice.testsRead ? 'ok' : '--',
        label: `test report: none, rubric looks like ${advice.runners.join(' + ')} (${read})`,
        detail: advice.hints.join('; '),
      };
    },
  };
}
