import { Command } from 'clipanion';
import { UserError } from '../core/errors.js';
import { mainRoot } from '../core/repo/git.js';
import { type Devcontainer, describeDevcontainer, readDevcontainer } from '../plugins/sandbox-docker/devcontainer.js';
import {
  devcontainerSubject,
  trustDevcontainer,
  untrustDevcontainer,
} from '../plugins/sandbox-docker/devcontainer-trust.js';
import { commandContext } from './context.js';

/** The repository's dev container, or one line saying there is none. */
async function repositoryDevcontainer(): Promise<{ root: string; d: Devcontainer; off: boolean }> {
  const { root, config } = await commandContext();
  if (!root) throw new UserError('not inside a git repository; run this at the root of one');
  const d = readDevcontainer(root);
  if (!d) {
    throw new UserError(
      'this repository declares no dev container (.devcontainer/devcontainer.json or .devcontainer.json): nothing to trust',
    );
  }
  return { root: await mainRoot(root), d, off: config.str('CHALK_DEVCONTAINER') === 'off' };
}

export default class SandboxTrustCommand extends Command {
  static override paths = [['sandbox', 'trust']];
  static override usage = Command.Usage({
    description:
      "acknowledge, on this machine, the sandbox image this repository's dev container proposes (its devcontainer.json and Dockerfile, by real path and content hash)",
  });

  async execute(): Promise<number> {
    const { root, d, off } = await repositoryDevcontainer();
    const subject = devcontainerSubject(root, d);
    const added = trustDevcontainer(subject);
    this.context.stdout.write(
      `${added ? 'trusted' : 'already trusted'} ${subject.spec}  ${subject.trustPath}  ${subject.hash}\n`,
    );
    if (d.kind === 'build') {
      this.context.stdout.write(
        `  ${d.dockerfile} is built with ${d.context || 'the repository root'} as its context; what it copies from there is not in the hash\n`,
      );
    }
    this.context.stdout.write(
      off
        ? 'next: CHALK_DEVCONTAINER=off ignores it; unset that to use it\n'
        : `next: chalk sandbox build (or the next run) builds the sandbox image from ${describeDevcontainer(d)}\n`,
    );
    return 0;
  }
}

export class SandboxUntrustCommand extends Command {
  static override paths = [['sandbox', 'untrust']];
  static override usage = Command.Usage({
    description: "take back this machine's trust of the repository's dev container",
  });

  async execute(): Promise<number> {
    const { root, d } = await repositoryDevcontainer();
    const subject = devcontainerSubject(root, d);
    const removed = untrustDevcontainer(subject);
    this.context.stdout.write(`${removed ? 'untrusted' : 'was not trusted'} ${subject.spec}  ${subject.trustPath}\n`);
    return 0;
  }
}
