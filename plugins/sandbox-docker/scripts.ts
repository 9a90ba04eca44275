import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SHARE_DIR } from '../../core/host.js';

export type ScriptName =
  | 'clone'
  | 'commit'
  | 'export'
  | 'reset'
  | 'tree-id'
  | 'graft'
  | 'restore'
  | 'read-file'
  | 'put-file'
  | 'keeper'
  | 'top'
  | 'state-save'
  | 'state-restore';

const cache = new Map<ScriptName, string>();

/** A script from share/sandbox/scripts; its text is the command a sandbox exec runs. */
export function script(name: ScriptName): string {
  let text = cache.get(name);
  if (text === undefined) {
    text = readFileSync(join(SHARE_DIR, 'sandbox', 'scripts', `${name}.sh`), 'utf8');
    cache.set(name, text);
  }
  return text;
}

/** Quotes one word for a POSIX shell. */
export const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
