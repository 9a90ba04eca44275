import { CREDENTIALS as CREDENTIAL_NAMES } from '../agent/credentials.js';
import type { Config } from '../config/config.js';
import type { CheckResult, DoctorCheck } from '../kernel/doctor.js';
import type { Kernel } from '../kernel/kernel.js';
import { Tokens } from '../kernel/tokens.js';
import { run } from '../process/run.js';

const check = (id: string, fn: () => Promise<CheckResult | CheckResult[]>): DoctorCheck => ({ id, run: fn });

export function nodeCheck(version = process.versions.node): DoctorCheck {
  return check('node', async () => {
    const major = Number(version.split('.')[0]);
    return major >= 20
      ? { status: 'ok', label: `node ${version}` }
      : { status: 'FAIL', label: `node ${version}`, detail: 'Chalk needs Node.js 20 or newer' };
  });
}

export function gitCheck(): DoctorCheck {
  return check('git', async () => {
    const r = await run('git', ['--version']);
    return r.code === 0
      ? { status: 'ok', label: r.stdout.trim() }
      : { status: 'FAIL', label: 'git', detail: 'install git' };
  });
}

/** Which agent credential is set, by name only: the value is never read into a line. */
export function credentialsCheck(env: NodeJS.ProcessEnv = process.env): DoctorCheck {
  return check('credentials', async () => {
    const set = CREDENTIAL_NAMES.filter((n) => (env[n] ?? '') !== '');
    return set.length > 0
      ? { status: 'ok', label: `agent credentials (${set.join(', ')})` }
      : {
          status: 'FAIL',
          label: 'agent credentials',
          detail: `set one of ${CREDENTIAL_NAMES.join(', ')} (claude setup-token gives CLAUDE_CODE_OAUTH_TOKEN)`,
        };
  });
}

export function forgeCheck(kernel: Kernel, root: string | null): DoctorCheck {
  return check('forge', async () => {
    const forge = kernel.resolve(Tokens.Forge);
    if (!forge.opensRequests)
      return { status: '--', label: 'forge', detail: `CHALK_FORGE=${forge.name}: requests are not opened` };
    const s = await forge.status(root ?? process.cwd());
    const lines: CheckResult[] = [
      s.cli
        ? { status: 'ok', label: `${s.cli} (${forge.name})` }
        : { status: 'FAIL', label: `${forge.name} CLI`, detail: s.hint ?? 'not installed' },
    ];
    if (s.cli) {
      lines.push(
        s.loggedIn
          ? { status: 'ok', label: `${forge.name} signed in` }
          : { status: 'FAIL', label: `${forge.name} signed in`, detail: s.hint ?? 'not signed in' },
      );
    }
    return lines;
  });
}

export function configCheck(config: Config): DoctorCheck {
  return check('config', async () => {
    const fromFile = [...config.entries.values()].filter((e) => e.source === 'file').length;
    const rubric = config.str('CHALK_TEST_CMD');
    return [
      { status: 'ok', label: `configuration valid (${fromFile} keys from .chalk/config)` },
      rubric
        ? { status: 'ok', label: 'rubric set (CHALK_TEST_CMD)' }
        : { status: '--', label: 'rubric', detail: 'set CHALK_TEST_CMD in .chalk/config (chalk init writes one)' },
    ];
  });
}

/** Runs every check in order; a check that throws is a FAIL line naming it. */
export async function runChecks(checks: readonly DoctorCheck[]): Promise<CheckResult[]> {
  const out: CheckResult[] = [];
  for (const c of checks) {
    try {
      const r = await c.run();
      out.push(...(Array.isArray(r) ? r : [r]));
    } catch (err) {
      out.push({
        status: 'FAIL',
        label: c.id,
        detail: err instanceof Error ? err.message.split('\n')[0] : String(err),
      });
    }
  }
  return out;
}

export function formatCheck(r: CheckResult): string {
  const status = r.status === 'ok' ? 'ok  ' : r.status === 'FAIL' ? 'FAIL' : '--  ';
  return `  ${status}  ${r.label}${r.detail ? `: ${r.detail}` : ''}`;
}
