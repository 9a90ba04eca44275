import type { CommandClass } from 'clipanion';
import type { PluginCommandContext } from '../../core/plugin.js';
import { ensureEgressImage } from './egress/image.js';
import { buildSandboxImage, DEFAULT_IMAGE, effectiveBase, extraCaBundle } from './image.js';
import { ensurePlannedImage, planFor } from './image-source.js';

/**
 * `chalk sandbox build`: the shared image from share/sandbox/Dockerfile and the egress image from
 * share/egress/Dockerfile, then, in a repository whose dev container or CHALK_TOOLCHAIN asks for
 * one, that repository's image.
 */
export function sandboxBuildCommand({
  Command,
  Option,
}: typeof import('clipanion')): CommandClass<PluginCommandContext> {
  return class SandboxBuildCommand extends Command<PluginCommandContext> {
    static override paths = [['sandbox', 'build']];
    static override usage = Command.Usage({
      description: `build ${DEFAULT_IMAGE} from share/sandbox/Dockerfile and the egress image from share/egress/Dockerfile (base: CHALK_SANDBOX_BASE, else the image's previous base; extra CA: CHALK_SANDBOX_CA, NODE_EXTRA_CA_CERTS or SSL_CERT_FILE), then this repository's image when its dev container or CHALK_TOOLCHAIN asks for one`,
    });
    force = Option.Boolean('--force', false, { description: 'build even when the inputs are unchanged' });

    async execute(): Promise<number> {
      const { root, config } = this.context;
      const out = (line: string) => this.context.stdout.write(`${line}\n`);
      const steps = (line: string) => {
        if (/^Step \d+\/\d+ :/.test(line)) out(`  ${line.slice(0, 110)}`);
      };
      const base = await effectiveBase();
      const ca = extraCaBundle();
      out(`building ${DEFAULT_IMAGE} on ${base}${ca ? `, trusting ${ca}` : ''}`);
      const built = await buildSandboxImage({ force: this.force, onLine: steps });
      out(
        built
          ? `built ${DEFAULT_IMAGE}`
          : `${DEFAULT_IMAGE} is up to date (same Dockerfile, base and CA bundle); --force rebuilds`,
      );
      // The egress container's image, on the same base: every sandbox's only way out.
      out(`egress image ${await ensureEgressImage({ force: this.force })} is built`);
      if (!root) return 0;
      const plan = await planFor(config);
      for (const note of plan.notes) out(`note: ${note}`);
      if (plan.source.kind !== 'toolchain' && plan.source.kind !== 'devcontainer') return 0;
      const { tag } = await ensurePlannedImage(config, { force: this.force, onLine: steps, onBuild: out });
      out(`this repository's sandbox image is ${tag} (${plan.source.why})`);
      return 0;
    }
  };
}
