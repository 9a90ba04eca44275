import { posix } from 'node:path';
import { type ParseError, parse, printParseErrorCode } from 'jsonc-parser';
import { z } from 'zod';
import { readRepoFile } from '../../core/host.js';
import { UserError } from '../../core/plugin.js';

/**
 * A repository's dev container (https://containers.dev): `.devcontainer/devcontainer.json`
 * (or `.devcontainer.json`), JSON with comments, read as hostile input through
 * core/fs/repo-file.ts. Chalk takes its image from it: `image`, or `build.dockerfile` with
 * `build.context`, `build.args` and `build.target` (the older top-level `dockerFile` and
 * `context` too). Paths are relative to the file's folder and must stay in the repository.
 * What it is for an editor (features, mounts, lifecycle commands) is not Chalk's to run.
 */

export const DEVCONTAINER_FILES = ['.devcontainer/devcontainer.json', '.devcontainer.json'] as const;
const MAX_BYTES = 256 * 1024;
const MAX_DOCKERFILE_BYTES = 1024 * 1024;

export type Devcontainer =
  | { file: string; text: string; kind: 'image'; image: string }
  | {
      file: string;
      /** The devcontainer.json as read, for the trust hash. */
      text: string;
      kind: 'build';
      /** Repository-relative paths. */
      dockerfile: string;
      context: string;
      args: Record<string, string>;
      target: string | null;
      /** The Dockerfile's text, for the trust hash and the image's name. */
      dockerfileText: string;
    };

const shape = z.object({
  image: z.string().min(1).optional(),
  dockerFile: z.string().min(1).optional(),
  context: z.string().min(1).optional(),
  build: z
    .object({
      dockerfile: z.string().min(1).optional(),
      context: z.string().min(1).optional(),
      args: z.record(z.string(), z.string()).optional(),
      target: z.string().min(1).optional(),
    })
    .optional(),
  dockerComposeFile: z.unknown().optional(),
});

/** `rel` (relative to the file's folder `dir`) as a repository-relative path; refused outside it. */
function inRepo(file: string, dir: string, rel: string, what: string): string {
  if (posix.isAbsolute(rel) || rel.includes('\\')) {
    throw new UserError(`${file}: ${what} '${rel}' must be a path relative to ${dir || 'the repository root'}`);
  }
  const joined = posix.normalize(posix.join(dir, rel));
  if (joined === '..' || joined.startsWith('../')) {
    throw new UserError(`${file}: ${what} '${rel}' is outside the repository; keep it inside`);
  }
  return joined === '.' ? '' : joined.replace(/\/$/, '');
}

/** The dev container a repository declares, or null when it has none. Throws one line for a bad one. */
export function readDevcontainer(root: string): Devcontainer | null {
  for (const file of DEVCONTAINER_FILES) {
    const text = readRepoFile(root, file, { maxBytes: MAX_BYTES, what: file });
    if (text === null) continue;
    return parseDevcontainer(root, file, text);
  }
  return null;
}

export function parseDevcontainer(root: string, file: string, text: string): Devcontainer {
  const errors: ParseError[] = [];
  const json = parse(text, errors, { allowTrailingComma: true });
  const first = errors[0];
  if (first) {
    throw new UserError(
      `${file} is not valid JSON with comments (${printParseErrorCode(first.error)} at offset ${first.offset}); fix it or set CHALK_DEVCONTAINER=off`,
    );
  }
  const parsed = shape.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UserError(
      `${file}: ${issue?.path.join('.') || 'the file'} ${issue?.message ?? 'is malformed'}; fix it or set CHALK_DEVCONTAINER=off`,
    );
  }
  const d = parsed.data;
  const dir = posix.dirname(file) === '.' ? '' : posix.dirname(file);
  const dockerfile = d.build?.dockerfile ?? d.dockerFile;
  if (dockerfile) {
    const context = inRepo(file, dir, d.build?.context ?? d.context ?? '.', 'build.context');
    const path = inRepo(file, dir, dockerfile, 'build.dockerfile');
    if (context !== '' && path !== context && !path.startsWith(`${context}/`)) {
      throw new UserError(
        `${file}: build.dockerfile '${dockerfile}' is outside build.context; Chalk builds only a Dockerfile inside its context`,
      );
    }
    const dockerfileText = readRepoFile(root, path, {
      maxBytes: MAX_DOCKERFILE_BYTES,
      what: `${file} build.dockerfile`,
    });
    if (dockerfileText === null) throw new UserError(`${file}: build.dockerfile ${path} does not exist`);
    return {
      file,
      text,
      kind: 'build',
      dockerfile: path,
      context,
      args: d.build?.args ?? {},
      target: d.build?.target ?? null,
      dockerfileText,
    };
  }
  if (d.image) return { file, text, kind: 'image', image: d.image };
  if (d.dockerComposeFile !== undefined) {
    throw new UserError(
      `${file} uses dockerComposeFile, which Chalk does not build; set CHALK_IMAGE or CHALK_DEVCONTAINER=off`,
    );
  }
  throw new UserError(`${file} names neither an image nor a build.dockerfile; add one or set CHALK_DEVCONTAINER=off`);
}

/** What the dev container proposes, in words: `image X` or `a build of .devcontainer/Dockerfile`. */
export function describeDevcontainer(d: Devcontainer): string {
  return d.kind === 'image' ? `image ${d.image}` : `a build of ${d.dockerfile}`;
}
