import { Command, Option } from 'clipanion';
import { buildSandboxImage, DEFAULT_IMAGE, effectiveBase, extraCaBundle } from '../plugins/sandbox-docker/image.js';

export default class SandboxBuildCommand extends Command {
  static override paths = [['sandbox', 'build']];
  static override usage = Command.Usage({
    description: `build ${DEFAULT_IMAGE} from share/sandbox/Dockerfile (base: CHALK_SANDBOX_BASE, else the image's previous base; extra CA: CHALK_SANDBOX_CA, NODE_EXTRA_CA_CERTS or SSL_CERT_FILE)`,
  });
  force = Option.Boolean('--force', false, { description: 'build even when the inputs are unchanged' });

  async execute(): Promise<number> {
    const base = await effectiveBase();
    const ca = extraCaBundle();
    this.context.stdout.write(`building ${DEFAULT_IMAGE} on ${base}${ca ? `, trusting ${ca}` : ''}\n`);
    const built = await buildSandboxImage({
      force: this.force,
      onLine: (line) => {
        if (/^Step \d+\/\d+ :/.test(line)) this.context.stdout.write(`  ${line.slice(0, 110)}\n`);
      },
    });
    this.context.stdout.write(
      built
        ? `built ${DEFAULT_IMAGE}\n`
        : `${DEFAULT_IMAGE} is up to date (same Dockerfile, base and CA bundle); --force rebuilds\n`,
    );
    return 0;
  }
}
