import type { Config } from '../config/config.js';
import type { CheckResult, DoctorCheck } from '../kernel/doctor.js';
import type { OneShotRunner } from '../ports/agent.js';
import { START_MODE_REQUEST, startModeInvocation } from './invocation.js';

/**
 * Which permission mode a loop would start in, as the CLI itself reports it
 * for `initialize` over `--input-format stream-json`. No message is sent, so
 * the probe spends nothing.
 */

export const PROBE_TIMEOUT_MS = 60_000;

/** `.response.response.current_permission_mode` of the control_response line, or undefined. */
export function parseStartMode(stdout: string): string | undefined {
  for (const line of stdout.split('\n')) {
    if (!line.trim().startsWith('{')) continue;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      continue;
    }
    const o = v as { type?: unknown; response?: { response?: { current_permission_mode?: unknown } } };
    if (o.type !== 'control_response') continue;
    const mode = o.response?.response?.current_permission_mode;
    return typeof mode === 'string' && /^[a-zA-Z]+$/.test(mode) ? mode : undefined;
  }
  return undefined;
}

export async function probeStartMode(runner: OneShotRunner, model: string): Promise<string | undefined> {
  try {
    const r = await runner.runOnce(startModeInvocation(model), {
      stdin: START_MODE_REQUEST,
      timeoutMs: PROBE_TIMEOUT_MS,
    });
    return parseStartMode(r.stdout);
  } catch {
    return undefined;
  }
}

const isAnthropic = (url: string) => {
  if (!url) return true;
  try {
    return new URL(url).hostname.endsWith('anthropic.com');
  } catch {
    return false;
  }
};

/** The doctor line for a probe's answer. */
export function startModeLine(
  mode: string | undefined,
  opts: { permissionMode: string; model: string; baseUrl: string },
): CheckResult {
  const label = `auto mode for ${opts.model || 'the default model'}`;
  if (opts.permissionMode === 'bypass') {
    return { status: '--', label, detail: 'auto mode not used (CHALK_PERMISSION_MODE=bypass)' };
  }
  if (mode === undefined) {
    return { status: '--', label, detail: 'could not verify; needs Docker running and the image built' };
  }
  if (mode === 'auto') {
    return isAnthropic(opts.baseUrl)
      ? { status: 'ok', label }
      : {
          status: 'ok',
          label,
          detail:
            "the CLI starts in auto mode, but its safety check runs on Anthropic's servers: unless the gateway at ANTHROPIC_BASE_URL passes it through, every checked action is refused; then set CHALK_PERMISSION_MODE=bypass",
        };
  }
  const shown = mode === 'default' ? 'manual' : mode;
  return {
    status: 'FAIL',
    label,
    detail: `unavailable: a loop would start in ${shown} mode and every edit would be refused; pick another CHALK_MODEL, have an administrator enable auto mode, or set CHALK_PERMISSION_MODE=bypass`,
  };
}

/** The `chalk doctor` check; `runner` gives the sandbox image's one-shot runner, if any. */
export function startModeCheck(
  config: Config,
  runner: () => OneShotRunner | undefined,
  env: NodeJS.ProcessEnv = process.env,
): DoctorCheck {
  return {
    id: 'agent-start-mode',
    async run() {
      const opts = {
        permissionMode: config.str('CHALK_PERMISSION_MODE'),
        model: config.str('CHALK_MODEL'),
        baseUrl: env.ANTHROPIC_BASE_URL ?? '',
      };
      if (opts.permissionMode === 'bypass') return startModeLine(undefined, opts);
      const r = runner();
      const mode = r ? await probeStartMode(r, opts.model) : undefined;
      return startModeLine(mode, opts);
    },
  };
}
