import type { Config } from '../../core/config/config.js';
import { LOCAL_DECIDER } from '../../core/decision/select.js';
import { isLocalUrl } from '../../core/decision/trust.js';
import type { CheckResult, DoctorCheck } from '../../core/kernel/doctor.js';
import type { Kernel, Plugin } from '../../core/kernel/kernel.js';
import { Tokens } from '../../core/kernel/tokens.js';
import { localDeciderPaths } from '../../core/layout.js';
import { entryFromConfig } from '../decider-http/index.js';
import { RunStarts, startInBackground } from './background.js';
import { LocalDecider } from './client.js';
import { readInstalled } from './installed.js';
import { startingReason } from './services.js';
import { installCheckResult, localStatusPart, readInstallStatus } from './status.js';
import { startTimeoutMs } from './up.js';

/**
 * The local decider at CHALK_DECIDER_URL; a question that finds nothing listening calls
 * `onUnreachable` (the plugin's RunStarts: start it in the background, by the start rule).
 */
export function localDeciderFromConfig(
  config: Config,
  o: { env?: NodeJS.ProcessEnv; onUnreachable?: () => void } = {},
): LocalDecider {
  const env = o.env ?? process.env;
  const paths = localDeciderPaths(env);
  const installed = readInstalled(paths.installed);
  const revision = installed?.decider.revision;
  const wake = o.onUnreachable ?? (() => startInBackground(config, env));
  let woken = false;
  return new LocalDecider({
    ...(revision ? { revision } : {}),
    ...(installed ? { medianMs: installed.benchMs } : {}),
    entry: entryFromConfig(config),
    url: config.str('CHALK_DECIDER_URL'),
    askLock: paths.askLock,
    lastUsed: paths.lastUsed,
    starting: () => startingReason(paths, startTimeoutMs(config)),
    onUnreachable: () => {
      if (woken) return;
      woken = true;
      wake();
    },
  });
}

/** `chalk doctor`'s line: what `chalk decider up` installed and measured, and whether it runs. */
export function localDeciderCheck(config: Config, env: NodeJS.ProcessEnv = process.env): DoctorCheck {
  return {
    id: 'decider-local',
    async run(): Promise<CheckResult> {
      const label = 'local decider';
      if (!isLocalUrl(config.str('CHALK_DECIDER_URL')))
        return { status: '--', label, detail: 'not used (CHALK_DECIDER_URL is on another machine)' };
      const r = readInstallStatus(config, env);
      if (!r) return { status: '--', label, detail: 'not installed (chalk decider up installs it)' };
      return installCheckResult(r.status);
    },
  };
}

/** Whether the Decider a run gets is this plugin's `local` (core's selection chose it, and no plugin bound another). */
export function localIsBound(kernel: Kernel): boolean {
  return kernel.boundByPlugin(Tokens.Decider) === 'selection' && kernel.selected.get('Decider') === LOCAL_DECIDER;
}

/**
 * The local decider: strands-decider on this machine's loopback, speaking decider protocol v1
 * through the hosted decider's client, one question at a time across the machine. Offered as
 * `local` once `chalk decider up` installed it (a loopback URL with nothing installed is any
 * server there, reached as `hosted`); core's rule picks it for a loopback CHALK_DECIDER_URL. A
 * run starts the services in the background by `startRule` (start-rule.ts): at its sandbox's start
 * when rerank is possible, else when a loop fails its rubric or a question finds nothing listening,
 * and never with under 6,144 MiB free unless CHALK_DECIDER=on.
 */
const plugin: Plugin = {
  name: 'decider-local',
  register(kernel) {
    kernel.checks.push(localDeciderCheck(kernel.config));
    kernel.deciderStatus.push(localStatusPart(kernel.config));
    if (readInstalled(localDeciderPaths().installed) === null) return;
    const starts = new RunStarts({
      config: kernel.config,
      log: kernel.log,
      resolvedLessons: async (repo) => (await kernel.resolve(Tokens.Store).lessons.list({ repo })).length,
    });
    kernel.offer('Decider', LOCAL_DECIDER, {
      useFactory: () => localDeciderFromConfig(kernel.config, { onUnreachable: () => starts.noAnswer() }),
    });
    kernel.hooks.beforeSandboxStart.tapPromise('decider-local', async (ev) => {
      if (localIsBound(kernel)) await starts.atRunStart(ev.repo);
    });
    kernel.hooks.afterRubric.tapPromise('decider-local', async (ev) => {
      if (!ev.passed && localIsBound(kernel)) starts.afterFailedLoop();
    });
  },
};
export default plugin;
