import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { readJsonRecord, stateDir, writeJsonRecord } from '../../../core/host.js';
import { UserError } from '../../../core/plugin.js';
import { hostPort } from './daemon/names.js';
import { type AllowEntry, parseAllowList } from './daemon/policy.js';

/**
 * Hosts a repository asks its sandboxes to reach (`CHALK_EGRESS_HOSTS` in `.chalk/config`, a
 * file anybody, the agent included, can commit) apply only once someone on this machine has
 * acknowledged them with `chalk egress trust`, as plugins named there are: keyed by the
 * repository's real path and each host as written, so a new host needs a new acknowledgement.
 * Set in the environment, they are the person's own and need none. The record is
 * `<state>/egress/trusted.json`, mode 0600, written atomically.
 */

const recordSchema = z.object({
  version: z.literal(1),
  repos: z.array(z.object({ path: z.string().min(1), hosts: z.array(z.string()), trustedAt: z.string() })),
});
type Record_ = z.infer<typeof recordSchema>;

export function egressTrustFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(stateDir(env), 'egress', 'trusted.json');
}

function read(env: NodeJS.ProcessEnv): Record_ {
  const damaged = (file: string) =>
    new UserError(`${file} is not an egress trust record; delete it and run chalk egress trust again`);
  return readJsonRecord(egressTrustFile(env), recordSchema, { version: 1, repos: [] }, damaged);
}

function write(rec: Record_, env: NodeJS.ProcessEnv): void {
  writeJsonRecord(egressTrustFile(env), rec);
}

/** Each proposed entry in its one written form (`host:port`, or `*.suffix:port`), one per port. */
export function entryTexts(entries: readonly AllowEntry[]): string[] {
  return entries.flatMap((e) => e.ports.map((p) => hostPort(`${e.subdomains ? '*.' : ''}${e.host.host}`, p)));
}

/** The repository's proposals split into those this machine acknowledged and those it did not. */
export function proposals(
  root: string,
  proposed: string,
  env: NodeJS.ProcessEnv = process.env,
): { trusted: string[]; untrusted: string[] } {
  const texts = entryTexts(parseAllowList(proposed).entries);
  if (texts.length === 0) return { trusted: [], untrusted: [] };
  const path = realpathSync(root);
  const known = new Set(read(env).repos.find((r) => r.path === path)?.hosts ?? []);
  return { trusted: texts.filter((t) => known.has(t)), untrusted: texts.filter((t) => !known.has(t)) };
}

/** Acknowledges every proposal of the repository; returns those that were new. */
export function trustProposals(root: string, proposed: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const { untrusted, trusted } = proposals(root, proposed, env);
  if (untrusted.length === 0) return [];
  const rec = read(env);
  const path = realpathSync(root);
  const repos = rec.repos.filter((r) => r.path !== path);
  repos.push({ path, hosts: [...trusted, ...untrusted], trustedAt: new Date().toISOString() });
  write({ version: 1, repos }, env);
  return untrusted;
}

/** Takes back every acknowledgement of the repository; returns the hosts it held. */
export function untrustProposals(root: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const rec = read(env);
  const path = realpathSync(root);
  const had = rec.repos.find((r) => r.path === path)?.hosts ?? [];
  if (had.length === 0) return [];
  write({ version: 1, repos: rec.repos.filter((r) => r.path !== path) }, env);
  return had;
}
