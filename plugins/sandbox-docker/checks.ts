import { programsOf, toolchainList, toolchainProviding } from '../../core/host.js';
import { type CheckResult, type Config, type DoctorCheck, UserError } from '../../core/plugin.js';
import { describeDockerError, docker } from './docker.js';
import { EGRESS_LABEL } from './egress/engine.js';
import { egressImageTag } from './egress/image.js';
import { inspectImage } from './image.js';
import type { ImagePlan } from './image-plan.js';
import type { ImageChoice } from './image-source.js';
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

/** What to change when `program` is missing from the image the plan chose. */
export function missingHint(program: string, config: Config, plan: ImagePlan): string {
  const toolchain = toolchainProviding(program);
  const current = toolchainList(config.str('CHALK_TOOLCHAIN'));
  const source = plan.source;
  if (toolchain && !current.includes(toolchain)) {
    const line = [...current, toolchain].join(',');
    const fix =
      current.length === 0
        ? `add CHALK_TOOLCHAIN=${line} to .chalk/config`
        : `set CHALK_TOOLCHAIN=${line} in .chalk/config`;
    return source.kind === 'toolchain' || source.kind === 'default'
      ? fix
      : `the image comes from ${source.why}: add it there, or unset that and ${fix}`;
  }
  if (toolchain) return `the image comes from ${source.why}, which does not have it: add it there`;
  return 'add the Debian package that has it to CHALK_SANDBOX_PACKAGES, or use an image that has it (CHALK_IMAGE)';
}

/** `chalk doctor`: the engine, the sandbox image (which one and why), the claude CLI and the rubric's programs inside it. */
export function sandboxChecks(config: Config, sandbox: () => DockerSandbox): DoctorCheck[] {
  let engine: Promise<CheckResult> | undefined;
  let chosen: Promise<ImageChoice | null> | undefined;
  const engineOnce = () => {
    engine ??= engineLine();
    return engine;
  };
  /** The image the configuration names (null without the engine); a plan that cannot be made throws its line. */
  const imageOnce = async () => {
    if ((await engineOnce()).status !== 'ok') return null;
    chosen ??= sandbox().chooseImage();
    return chosen;
  };
  return [
    { id: 'sandbox-engine', run: engineOnce },
    {
      id: 'sandbox-runtime',
      async run() {
        const label = 'sandbox runtime';
        if ((await engineOnce()).status !== 'ok') return { status: '--', label, detail: 'needs the Docker engine' };
        try {
          const name = await sandbox().runtimeName();
          return name
            ? { status: 'ok', label, detail: `${name} (gVisor), registered with the engine (CHALK_SANDBOX_RUNTIME)` }
            : { status: 'ok', label, detail: "runc, the engine's default (CHALK_SANDBOX_RUNTIME=runsc for gVisor)" };
        } catch (err) {
          return { status: 'FAIL', label, detail: err instanceof Error ? err.message : String(err) };
        }
      },
    },
    {
      id: 'sandbox-egress',
      async run() {
        const label = 'egress proxy and model gateway';
        if ((await engineOnce()).status !== 'ok') return { status: '--', label, detail: 'needs the Docker engine' };
        const mode = `CHALK_EGRESS=${config.str('CHALK_EGRESS')}`;
        try {
          const d = await docker();
          const tag = await egressImageTag();
          const built = (await inspectImage(tag)) !== null;
          const up = await d.listContainers({ filters: { label: [`${EGRESS_LABEL}=proxy`], ancestor: [tag] } });
          const state = !built
            ? `image ${tag} not built yet (the first run builds it, or: chalk sandbox build)`
            : up.length > 0
              ? `${(up[0]?.Names[0] ?? '').replace(/^\//, '')} running`
              : `image ${tag} built; its container starts with the first run`;
          return { status: 'ok', label, detail: `${mode}; ${state}` };
        } catch (err) {
          return { status: 'FAIL', label, detail: `${mode}; ${describeDockerError(err)}` };
        }
      },
    },
    {
      id: 'sandbox-image',
      async run() {
        if ((await engineOnce()).status !== 'ok')
          return { status: '--', label: 'sandbox image', detail: 'needs the Docker engine' };
        let choice: ImageChoice | null;
        try {
          choice = await imageOnce();
        } catch (err) {
          if (!(err instanceof UserError)) throw err;
          return { status: 'FAIL', label: 'sandbox image', detail: err.message };
        }
        if (!choice) return { status: '--', label: 'sandbox image', detail: 'no configuration' };
        const notes: CheckResult[] = choice.plan.notes.map((n) => ({
          status: '--',
          label: 'sandbox image',
          detail: n,
        }));
        const label = `sandbox image ${choice.tag ?? '(layered on the dev container, named once built)'}`;
        const why = choice.plan.source.why;
        if (choice.present && choice.tag) {
          const info = await inspectImage(choice.tag);
          return [...notes, { status: 'ok', label, detail: `${why}; ${Math.round((info?.sizeBytes ?? 0) / MiB)} MiB` }];
        }
        if (choice.plan.source.kind === 'configured') {
          return [...notes, { status: 'FAIL', label, detail: `${why}: not found locally; pull or build it first` }];
        }
        return [
          ...notes,
          { status: '--', label, detail: `${why}; not built yet: run chalk sandbox build (a run builds it too)` },
        ];
      },
    },
    {
      id: 'sandbox-claude',
      async run() {
        const label = 'claude CLI in the sandbox image';
        const choice = await imageOnce().catch(() => null);
        if (!choice?.present) return { status: '--', label, detail: 'needs the Docker engine and the image' };
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
    {
      id: 'sandbox-commands',
      async run() {
        const commands = (['CHALK_TEST_CMD', 'CHALK_SETUP_CMD'] as const)
          .map((key) => ({
            what: key === 'CHALK_TEST_CMD' ? 'rubric' : 'setup',
            programs: programsOf(config.str(key)),
          }))
          .filter((c) => c.programs.length > 0);
        if (commands.length === 0) return [];
        const choice = await imageOnce().catch(() => null);
        if (!choice?.present || !choice.tag) {
          return commands.map((c) => ({
            status: '--' as const,
            label: c.what,
            detail: `${c.programs.join(', ')} not looked up: the sandbox image is not built yet`,
          }));
        }
        const image = choice.tag;
        const found = await sandbox().lookup([...new Set(commands.flatMap((c) => c.programs))]);
        return commands.flatMap((c) =>
          c.programs.map((p): CheckResult => {
            const path = found.get(p);
            return path
              ? { status: 'ok', label: `${c.what}: ${p} found in ${image}`, detail: path }
              : {
                  status: 'FAIL',
                  label: `${c.what}: ${p} not found in ${image}`,
                  detail: missingHint(p, config, choice.plan),
                };
          }),
        );
      },
    },
  ];
}
