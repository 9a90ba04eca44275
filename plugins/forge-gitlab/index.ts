import { CliForge } from '../../core/forge/cli-forge.js';
import type { Plugin } from '../../core/kernel/kernel.js';

/** GitLab through the `glab` CLI: `glab mr create`. */
export const gitlabForge = () =>
  new CliForge({
    name: 'gitlab',
    bin: 'glab',
    requestArgs: (r) => ({
      args: [
        'mr',
        'create',
        '--yes',
        '--source-branch',
        r.branch,
        '--target-branch',
        r.base,
        '--title',
        r.title,
        '--description',
        r.body,
      ],
    }),
  });

const plugin: Plugin = {
  name: 'forge-gitlab',
  register(kernel) {
    kernel.offer('Forge', 'gitlab', { useFactory: gitlabForge });
  },
};
export default plugin;
