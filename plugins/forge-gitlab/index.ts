import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SHARE_DIR } from '../../core/host.js';
import { CliForge, type Plugin } from '../../core/plugin.js';

/** The GitLab CI file with Chalk's job, included from `.gitlab-ci.yml`. */
export const GITLAB_INCLUDE = '.gitlab/chalk.gitlab-ci.yml';
/** GitLab's pipeline file, which init creates (or asks the person to edit) to include Chalk's job. */
export const GITLAB_CI = '.gitlab-ci.yml';

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
    // Any host may be a self-hosted GitLab: taken when no forge claims the origin.
    matchOrigin: () => 'fallback',
    gateFiles: () => [
      {
        path: GITLAB_INCLUDE,
        content: readFileSync(join(SHARE_DIR, 'templates', 'gitlab', 'chalk.gitlab-ci.yml'), 'utf8'),
      },
      {
        path: GITLAB_CI,
        content: `include:\n  - local: ${GITLAB_INCLUDE}\n`,
        existing: {
          contains: 'chalk.gitlab-ci.yml',
          otherwise: `add "include: [{local: ${GITLAB_INCLUDE}}]" to .gitlab-ci.yml so merge requests run Chalk's gate`,
        },
      },
    ],
    guardedPaths: [GITLAB_INCLUDE, GITLAB_CI],
  });

const plugin: Plugin = {
  name: 'forge-gitlab',
  register(kernel) {
    kernel.offer('Forge', 'gitlab', { useFactory: gitlabForge });
  },
};
export default plugin;
