import { posix } from 'node:path';
import { checkpoints } from '../../spec/checkpoints.js';
import { notesFile, specFile } from './prompt.js';

/**
 * The guard: the agent cannot change how it is graded. Given what a loop
 * changed against its base, it says whether the loop's work may be committed.
 * Pure: the loop supplies the changed paths and the spec's text before and after.
 *
 * Refused:
 * - anything under `.chalk/` (configuration, textbook, prompt overrides: the grading setup);
 * - hook directories: `.husky/`, `.githooks/` and the ones given (`core.hooksPath` inside the tree);
 * - every offered forge's guarded paths (its CI gate files: Forge.guardedPaths);
 * - the files given as `gradedBy` (a textbook configured outside `.chalk/`);
 * - the files given as `configFiles`: git configuration the user's own configuration includes
 *   from inside the tree (`include.path = ../.gitconfig`), whose settings name programs host git
 *   runs (`core.sshCommand`, `credential.helper`, filter drivers) and where it pushes (`url.*`);
 * - a path that is an ancestor of any of these or of the spec (`.chalk`, `.github`, `specs` as a
 *   file, a symlink or a submodule), since the host would then find them through it;
 * - any change to `specs/<TICKET>.md` but ticking checkpoints, and a spec that is gone or is not a
 *   regular file after the loop.
 * Free: the ticket's notes (`specs/<TICKET>.notes.md`), and everything else, `.gitattributes`,
 * `.lfsconfig` and `.gitmodules` included: they only name filters, drivers and submodule URLs,
 * and host git runs no filter driver on the tree's content, no repository hook, and never
 * recurses into a submodule (core/git/host-git.ts).
 *
 * Paths are compared as a case-insensitive, normalising file system (macOS, Windows) would see
 * them: `.Chalk/config` or `.chalk./config` reach `.chalk/config` on such a host.
 */

/** The directory of the grading setup: configuration, textbook, prompt overrides. */
export const CHALK_DIR = '.chalk';
/** Hook directories refused whatever `core.hooksPath` says (husky's and the usual hand-made one). */
export const HOOK_DIRS: readonly string[] = ['.husky', '.githooks'];

export interface GuardInput {
  /** Repository-relative paths the loop's work touches against the loop's base (both sides of a rename). */
  changed: readonly string[];
  ticket: string;
  /** The spec's text at the loop's start, from the host. */
  specBefore: string;
  /** The sandbox's spec text after the loop; null when it is missing or not a regular file. */
  specAfter: string | null;
  /** More repository-relative hook directories (the user's `core.hooksPath` when it points inside the repo). */
  hooksDirs: readonly string[];
  /**
   * More repository-relative files the run is graded by that live outside `.chalk/`: the
   * configured `CHALK_TEXTBOOK` when it points elsewhere in the tree.
   */
  gradedBy?: readonly string[];
  /** Every offered forge's guarded paths (RunDeps.guardedPaths): how a request is graded on each forge. */
  forgeGuarded: readonly string[];
  /** Repository-relative git configuration files the user's configuration includes from the tree. */
  configFiles?: readonly string[];
}

export type GuardVerdict = { ok: true } | { ok: false; files: string[]; reason: string };

/** Names shown in a reason before `and N more`. */
export const REASON_NAMES = 10;

/** Code points HFS+ ignores in names (git's is_hfs_dotgit list), so `.\u200cchalk` is `.chalk` there. */
const HFS_IGNORED = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g;

/** A path as a case-insensitive, normalising host file system sees it. */
export function hostKey(path: string): string {
  const clean = posix.normalize(path.normalize('NFC').replace(HFS_IGNORED, '')).replace(/^(\.\/)+|\/+$/g, '');
  // Windows drops trailing dots and spaces from each name.
  return clean
    .split('/')
    .map((name) => (name === '.' || name === '..' ? name : name.replace(/[. ]+$/, '')))
    .join('/')
    .toLowerCase();
}

const isUnder = (key: string, dir: string) => dir === '' || key === dir || key.startsWith(`${dir}/`);

/**
 * The hook directories the guard refuses: `.husky`, `.githooks` and the given ones, as keys. A
 * given directory outside the repository (absolute, or leaving it through `..`) is not the tree's
 * business and is dropped; one that is the repository root refuses every path.
 */
function hookKeys(extra: readonly string[]): string[] {
  const keys = [...HOOK_DIRS, ...extra]
    .filter((d) => !posix.isAbsolute(d))
    .map(hostKey)
    .map((k) => (k === '.' ? '' : k));
  return keys.filter((k) => k !== '..' && !k.startsWith('../'));
}

/**
 * True when `after` is `before` with zero or more open checkpoint boxes ticked and nothing else:
 * the same lines with the same line endings, every changed line an open checkpoint (as the spec
 * parser counts them) whose one changed character is its box, `[ ]` to `[x]` or `[X]`.
 */
export function onlyTicked(before: string, after: string): boolean {
  if (after === before) return true;
  const was = before.split('\n');
  const now = after.split('\n');
  if (was.length !== now.length) return false;
  const open = new Map(
    checkpoints(before)
      .filter((c) => !c.ticked)
      .map((c) => [c.line, c.text]),
  );
  const ticked = new Map(
    checkpoints(after)
      .filter((c) => c.ticked)
      .map((c) => [c.line, c.text]),
  );
  for (let i = 0; i < was.length; i++) {
    if (was[i] === now[i]) continue;
    const text = open.get(i + 1);
    if (text === undefined || ticked.get(i + 1) !== text || !boxTicked(was[i] ?? '', now[i] ?? '')) return false;
  }
  return true;
}

/** The two lines differ in exactly one character, a box's space turned into `x` or `X`. */
function boxTicked(was: string, now: string): boolean {
  if (was.length !== now.length) return false;
  let at = -1;
  for (let j = 0; j < was.length; j++) {
    if (was[j] === now[j]) continue;
    if (at !== -1) return false;
    at = j;
  }
  return at > 0 && was.slice(at - 1, at + 2) === '[ ]' && (now[at] === 'x' || now[at] === 'X');
}

/** Characters a name cannot show raw in a one-line reason: controls, line and bidi controls. */
const UNSHOWABLE_RANGES = '\\u0000-\\u001f\\u007f-\\u009f\\u200b-\\u200f\\u2028-\\u202e\\u2060-\\u206f\\ufeff';
const UNSHOWABLE = new RegExp(`[${UNSHOWABLE_RANGES}]`, 'g');
const unicodeEscape = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/**
 * A path for a one-line reason: as is, or in double quotes with `"`, `\` and every such
 * character escaped (`\u001b`) when it holds anything a terminal would act on.
 */
export function showPath(path: string): string {
  if (path.search(UNSHOWABLE) === -1) return path;
  return `"${path.replace(/["\\]/g, '\\$&').replace(UNSHOWABLE, unicodeEscape)}"`;
}

/** Paths as a reason names them: the first REASON_NAMES, then `and N more`. */
export function showPaths(paths: readonly string[]): string {
  const shown = paths.slice(0, REASON_NAMES).map(showPath).join(', ');
  return paths.length > REASON_NAMES ? `${shown} and ${paths.length - REASON_NAMES} more` : shown;
}

/** Decides whether a loop's changes may be committed. */
export function guardLoop(input: GuardInput): GuardVerdict {
  const spec = specFile(input.ticket);
  const specKey = hostKey(spec);
  const notesKey = hostKey(notesFile(input.ticket));
  const trees = [hostKey(CHALK_DIR), ...hookKeys(input.hooksDirs)];
  const files = [...input.forgeGuarded, ...(input.gradedBy ?? []), ...(input.configFiles ?? [])].map(hostKey);
  const guarded = [...trees, ...files, specKey, notesKey];

  const refused: string[] = [];
  for (const path of new Set(input.changed)) {
    const key = hostKey(path);
    // The spec itself is judged by its text below; a name the host takes for the spec is refused.
    if (key === specKey && path !== spec) refused.push(path);
    if (key === specKey || key === notesKey) continue;
    const hit =
      trees.some((t) => isUnder(key, t)) ||
      files.includes(key) ||
      guarded.some((g) => g.startsWith(`${key}/`)) ||
      key === '..' ||
      key.startsWith('../');
    if (hit) refused.push(path);
  }

  const reasons: string[] = [];
  if (refused.length > 0) reasons.push(`the loop changed files the agent may not change: ${showPaths(refused)}`);
  // Judged whether or not the spec is among the changed paths: its text is what the host reads.
  const specWrong =
    input.specAfter === null
      ? 'the loop removed the spec or made it something other than a regular file'
      : onlyTicked(input.specBefore, input.specAfter)
        ? null
        : 'the loop changed the spec other than by ticking checkpoints';
  if (specWrong) reasons.push(`${specWrong}: ${spec}`);
  if (reasons.length === 0) return { ok: true };
  return { ok: false, files: specWrong ? [...refused, spec] : refused, reason: reasons.join('; ') };
}
