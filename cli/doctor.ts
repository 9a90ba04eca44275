import { Command, Option } from 'clipanion';
import { ConfigError } from '../core/config/config.js';
import { ConsoleLog } from '../core/kernel/console-log.js';
import type { CheckResult, DoctorCheck } from '../core/kernel/doctor.js';
import { worktreeRoot } from '../core/repo/git.js';
import {
  configCheck,
  credentialsCheck,
  forgeCheck,
  formatCheck,
  gitCheck,
  nodeCheck,
  runChecks,
} from '../core/setup/doctor.js';
import { testReportCheck } from '../core/setup/doctor-report.js';
import { kernelContext, loadCommandConfig } from './context.js';

export default class DoctorCommand extends Command {
  static override paths = [['doctor']];
  static override usage = Command.Usage({
    description: 'check this machine and repository: ok, FAIL (required) or --',
  });
  json = Option.Boolean('--json', false);

  async execute(): Promise<number> {
    const log = new ConsoleLog();
    const root = await worktreeRoot();
    const checks: DoctorCheck[] = [nodeCheck(), gitCheck()];
    let results: CheckResult[];
    try {
      const { kernel } = await kernelContext({ root, config: loadCommandConfig(root, log), log });
      checks.push(
        configCheck(kernel.config),
        testReportCheck(kernel.config, root),
        credentialsCheck(),
        forgeCheck(kernel, root),
        ...kernel.checks,
      );
      results = await runChecks(checks);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      results = [...(await runChecks(checks)), { status: 'FAIL', label: 'configuration', detail: err.message }];
    }
    const failed = results.some((r) => r.status === 'FAIL');
    if (this.json) {
      this.context.stdout.write(`${JSON.stringify({ ok: !failed, checks: results }, null, 2)}\n`);
    } else {
      for (const r of results) this.context.stdout.write(`${formatCheck(r)}\n`);
      if (failed) this.context.stderr.write('chalk: fix the FAIL items above\n');
    }
    return failed ? 1 : 0;
  }
}
