import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SHARE_DIR } from '../../core/host.js';
import { CliForge, type Plugin } from '../../core/plugin.js';

/** The GitHub Actions workflow `chalk init` writes: the CI gate of a pull request. */
export const GITHUB_WORKFLOW = '.github/workflows/chalk.yml';

/** A github.com origin, over https, ssh or scp-like `git@github.com:`. */
const GITHUB_ORIGIN = /^(https?:\/\/|ssh:\/\/)?([^@/]+@)?github\.com[:/]/;

/** GitHub through the `gh` CLI: `gh pr create`, body on stdin. */
export const githubForge = () =>
  new CliForge({
    name: 'github',
    bin: 'gh',
    requestArgs: (r) => ({
      args: ['pr', 'create', '--head', r.branch, '--base', r.base, '--title', r.title, '--body-file', '-'],
      input: r.body,
    }),
    matchOrigin: (url) => (GITHUB_ORIGIN.test(url) ? 'match' : 'no'),
    gateFiles: () => [
      { path: GITHUB_WORKFLOW, content: readFileSync(join(SHARE_DIR, 'templates', 'github', 'chalk.yml'), 'utf8') },
    ],
    guardedPaths: [GITHUB_WORKFLOW],
  });

const plugin: Plugin = {
  name: 'forge-github',
  register(kernel) {
    kernel.offer('Forge', 'github', { useFactory: githubForge });
  },
};
export default plugin;
