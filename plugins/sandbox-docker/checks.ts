import type { Config } from '../../core/config/config.js';
import type { CheckResult, DoctorCheck } from '../../core/kernel/doctor.js';
import { describeDockerError, docker } from './docker.js';
import { DEFAULT_IMAGE, inspectImage } from './image.js';
import type { DockerSandbox } from './sandbox.js';

const MiB = 1024 * 1024;

async function engineLine(): Promise<CheckResult> {
  try {
    const d = await docker();
    const info = (await d.info()) as { ServerVersion?: string; NCPU?: number; MemTotal?: number };
    return {
      status: 'ok',
      label: 'docker engine',
      detail: `${info.ServerVersion ?? '?'}, ${info.NCPU ?? '?'} CPUs, ${Math.round((info.MemTotal ?? 0) / MiB)} MiB`,
    };
  } catch (err) {
    return { status: 'FAIL', label: 'docker engine', detail: describeDockerError(err) };
  }
}

/** `chalk doctor`: the engine, the sandbox image, and the claude CLI inside it. */
export function sandboxChecks(config: Config, sandbox: () => DockerSandbox): DoctorCheck[] {
  const image = config.str('CHALK_IMAGE');
  let engine: Promise<CheckResult> | undefined;
  let present: Promise<Awaited<ReturnType<typeof inspectImage>>> | undefined;
  const engineOnce = () => {
    engine ??= engineLine();
    return engine;
  };
  const imageOnce = async () => {
    if ((await engineOnce()).status !== 'ok') return null;
    present ??= inspectImage(image).catch(() => null);
    return present;
  };
  return [
    { id: 'sandbox-engine', run: engineOnce },
    {
      id: 'sandbox-image',
      async run() {
        const label = `sandbox image ${image}`;
        if ((await engineOnce()).status !== 'ok') return { status: '--', label, detail: 'needs the Docker engine' };
        const info = await imageOnce();
        if (info) return { status: 'ok', label, detail: `${Math.round(info.sizeBytes / MiB)} MiB` };
        return image === DEFAULT_IMAGE
          ? { status: '--', label, detail: 'not built yet; run: chalk sandbox build (a run builds it too)' }
          : { status: 'FAIL', label, detail: 'not found locally; pull or build it first (CHALK_IMAGE)' };
      },
    },
    {
      id: 'sandbox-claude',
      async run() {
        const label = 'claude CLI in the sandbox image';
        if (!(await imageOnce())) return { status: '--', label, detail: 'needs the Docker engine and the image' };
        try {
          const r = await sandbox().runOnce(['claude', '--version'], { timeoutMs: 60_000 });
          const version = r.stdout.trim().split('\n')[0] ?? '';
          if (r.exitCode === 0 && version !== '') return { status: 'ok', label, detail: version };
          return {
            status: 'FAIL',
            label,
            detail: `claude --version exited ${r.exitCode}; rebuild the image (chalk sandbox build)`,
          };
        } catch (err) {
          return { status: 'FAIL', label, detail: describeDockerError(err) };
        }
      },
    },
  ];
}
