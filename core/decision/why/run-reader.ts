import { readFile } from 'node:fs/promises';
import { failingTests as readFailingTests } from '../../fingerprint/fingerprint.js';
import { diffNumstat } from '../../git/host-git.js';
import type { DetentionFacts, RunPaths } from '../../layout.js';

/**
 * Reads what a detained run left in its run directory (core/layout.ts):
 * the rubric log, the test report, detention.json, and, through git, the files
 * changed since the last green loop. Every reader returns null when its source
 * is absent, never throws for a missing file.
 */

async function readText(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return null;
  }
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI escapes are control characters.
const ANSI = /\u001b\[[0-9;?]*[A-Za-z]|\u001b\][^\u0007]*\u0007/g;
export const stripAnsi = (s: string) =>
  s
    .replace(ANSI, '')
    .replace(/\r(?!\n)/g, '\n')
    .replace(/\r/g, '');

export async function readDetention(paths: RunPaths): Promise<DetentionFacts | null> {
  const text = await readText(paths.detention);
  if (text === null) return null;
  try {
    const v = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as DetentionFacts) : null;
  } catch {
    return null;
  }
}

export async function readRubricLog(paths: RunPaths): Promise<string | null> {
  const text = await readText(paths.rubricLog);
  return text === null ? null : stripAnsi(text);
}

const ERRORISH = /error|Error:|ERR!|FAIL|panic|Traceback|assert|expected|exception|not ok/i;

/**
 * The rubric log as statements: one per meaningful line (ANSI stripped,
 * whitespace collapsed, duplicates and lines without two words dropped), the
 * error-like lines first chosen, then the log's last lines, at most `max`, in
 * log order.
 */
export function rubricStatements(log: string, max = 16): string[] {
  const seen = new Set<string>();
  const lines: string[] = [];
  for (const raw of log.split('\n')) {
    const line = raw.replace(/\s+/g, ' ').trim();
    if ((line.match(/[A-Za-z0-9_]{2,}/g) ?? []).length < 2 || seen.has(line)) continue;
    seen.add(line);
    lines.push(line);
  }
  const keep = new Set<number>();
  lines.forEach((l, i) => {
    if (keep.size < max && ERRORISH.test(l)) keep.add(i);
  });
  for (let i = lines.length - 1; i >= 0 && keep.size < max; i--) keep.add(i);
  return [...keep].sort((a, b) => a - b).map((i) => lines[i] as string);
}

/**
 * Failing test ids as the loop's fingerprint reads them (core/fingerprint: the
 * report when there is one, else every known runner's output), at most `max`;
 * [] when none can be read.
 */
export async function failingTests(paths: RunPaths, max = 8): Promise<string[]> {
  const log = (await readText(paths.rubricLog)) ?? '';
  const report = await readText(paths.report);
  return (readFailingTests(log, report) ?? []).slice(0, max);
}

/** `path (+added -deleted)` per file changed between the last green loop and the detention branch. */
export async function changedFiles(repoRoot: string, facts: DetentionFacts, max = 8): Promise<string[] | string> {
  if (!facts.green || !facts.branch) return 'the detention facts name no last green commit and detention branch';
  const rows = await diffNumstat(repoRoot, { from: facts.green, to: facts.branch }).catch(() => null);
  if (rows === null) return `git could not compare ${facts.green} with ${facts.branch}`;
  return rows
    .map((e) => (e.added === null ? `${e.path} (binary)` : `${e.path} (+${e.added} -${e.deleted})`))
    .slice(0, max);
}
