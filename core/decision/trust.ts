import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { isIPv4 } from 'node:net';
import { dirname } from 'node:path';
import { UserError } from '../errors.js';
import { trustedFile } from '../layout.js';

/**
 * The trust rule: a decider (or embedding service) on this machine may be
 * asked; one anywhere else is sent nothing, not even a health check, until
 * someone on this machine runs `chalk decider trust URL`, which shows what the
 * address would receive and records it in `decider/trusted` under the state
 * directory. `chalk decider untrust URL` takes it back.
 */

/** True when the URL's host is 127.0.0.0/8, `localhost` or `::1`. */
export function isLocalUrl(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return false;
  }
  if (host === 'localhost' || host === '[::1]' || host === '::1') return true;
  return isIPv4(host) && host.split('.')[0] === '127';
}

/** The form a URL is trusted under: scheme, host, port and path, never credentials, query or a trailing slash. */
export function trustKey(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new UserError(`not a URL: give the decider's base URL, like https://decider.example.com`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new UserError(`a decider URL must be http:// or https:// (got ${u.protocol}//)`);
  }
  return `${u.origin}${u.pathname.replace(/\/+$/, '')}`;
}

/** A URL for display: credentials, query and fragment dropped. */
export function displayUrl(url: string): string {
  try {
    return trustKey(url);
  } catch {
    return '(not a URL)';
  }
}

export function readTrusted(env: NodeJS.ProcessEnv = process.env): string[] {
  try {
    return readFileSync(trustedFile(env), 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'));
  } catch {
    return [];
  }
}

function writeTrusted(list: string[], env: NodeJS.ProcessEnv): void {
  const file = trustedFile(env);
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, list.map((l) => `${l}\n`).join(''), { mode: 0o600 });
  renameSync(tmp, file);
}

export function isTrusted(url: string, env: NodeJS.ProcessEnv = process.env): boolean {
  let key: string;
  try {
    key = trustKey(url);
  } catch {
    return false;
  }
  return readTrusted(env).includes(key);
}

/** Records the URL as acknowledged on this machine; returns false when it already was. */
export function trust(url: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const key = trustKey(url);
  const list = readTrusted(env);
  if (list.includes(key)) return false;
  writeTrusted([...list, key], env);
  return true;
}

/** Takes an acknowledgement back; returns false when there was none. */
export function untrust(url: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const key = trustKey(url);
  const list = readTrusted(env);
  if (!list.includes(key)) return false;
  writeTrusted(
    list.filter((l) => l !== key),
    env,
  );
  return true;
}

/**
 * Why a URL must be sent nothing, or null when it may be contacted.
 * `key` names the setting, for the message (CHALK_DECIDER_URL, CHALK_EMBED_URL).
 */
export function untrustedReason(url: string, key: string, env: NodeJS.ProcessEnv = process.env): string | null {
  if (isLocalUrl(url) || isTrusted(url, env)) return null;
  const shown = displayUrl(url);
  return `${key} ${shown} is not on this machine and was never trusted; nothing is sent to it. To allow it, run: chalk decider trust ${shown}`;
}

const said = new Set<string>();
/** Says a reason once per process (a command goes on without the decider and says why once). */
export function sayOnce(reason: string, say: (line: string) => void): void {
  if (said.has(reason)) return;
  said.add(reason);
  say(reason);
}

/** What a decider or an embedding service at a trusted address would receive: the list `chalk decider trust` prints. */
export function whatItReceives(): string[] {
  return [
    'A decider at this address would receive, over HTTP:',
    '  - POST /v1/systemone with a JSON body {"protocol": 1, "state": ..., "questions": ...}:',
    '    - the stuck question: for the failed loop and the loop before it, up to 20 failing test ids,',
    '      the first error line of each, and the `git diff --stat` between their trees',
    '      (file paths and changed-line counts only), 6,000 characters at most',
    '    - the lesson rerank: the current failure (first error and failing test ids, or the start',
    '      of the spec, or the last rubric lines, which may quote source lines from a stack trace),',
    '      up to 1,500 characters, and up to 5 past lessons (failure and fix note), 4,000 characters in all',
    '    - chalk why: the statements of the last rubric log, the failing test ids, the paths of the',
    '      files changed since the last green loop and the open lesson, one line of 160 characters each',
    '  - GET /health, with nothing of yours in it',
    '  - the CHALK_DECIDER_TOKEN bearer token, when set, in the Authorization header',
    'An embedding service at this address (CHALK_EMBED_URL) would receive the current failure',
    "(up to 4,000 characters) and each resolved lesson's failure (up to 1,500) and fix note.",
    "Never the repository's files, the changes themselves, or the Claude credentials.",
  ];
}
