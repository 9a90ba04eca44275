/**
 * The CI gate files `chalk init` writes, named once: init writes them, and the
 * run's guard (core/run/guard.ts) refuses a loop that changes any of them, since
 * they are how a merge request is graded.
 */

/** The GitHub Actions workflow. */
export const GITHUB_WORKFLOW = '.github/workflows/chalk.yml';
/** The GitLab CI file with Chalk's job, included from `.gitlab-ci.yml`. */
export const GITLAB_INCLUDE = '.gitlab/chalk.gitlab-ci.yml';
/** GitLab's pipeline file, which init creates (or asks the person to edit) to include Chalk's job. */
export const GITLAB_CI = '.gitlab-ci.yml';

/** Every CI gate file, repository-relative. */
export const CI_GATE_FILES: readonly string[] = [GITHUB_WORKFLOW, GITLAB_INCLUDE, GITLAB_CI];
