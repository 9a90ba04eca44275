import { CliForge } from '../../core/forge/cli-forge.js';
import type { Plugin } from '../../core/kernel/kernel.js';

/** GitHub through the `gh` CLI: `gh pr create`, body on stdin. */
export const githubForge = () =>
  new CliForge({
    name: 'github',
    bin: 'gh',
    requestArgs: (r) => ({
      args: ['pr', 'create', '--head', r.branch, '--base', r.base, '--title', r.title, '--body-file', '-'],
      input: r.body,
    }),
  });

const plugin: Plugin = {
  name: 'forge-github',
  register(kernel) {
    kernel.offer('Forge', 'github', { useFactory: githubForge });
  },
};
export default plugin;
