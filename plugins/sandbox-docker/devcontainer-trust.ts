import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import {
  addTrust,
  readTrustRecord,
  removeTrust,
  stateDir,
  type TrustRecordUse,
  type TrustState,
  trustState,
} from '../../core/host.js';
import { type Devcontainer, describeDevcontainer } from './devcontainer.js';

/**
 * A repository's dev container proposes the sandbox image; the person decides, the way plugins
 * are trusted (core/kernel/plugin-trust.ts): `chalk sandbox trust` records, on this machine,
 * the real path of its devcontainer.json and a sha256 of what it proposes (the file's text
 * and, for a build, the Dockerfile's path and text). A change to either needs a new trust.
 * What the Dockerfile copies from its context is not covered (as a file plugin's imports are
 * not): review the context with it.
 */

const USE: TrustRecordUse = { what: 'dev container', command: 'chalk sandbox trust' };

export function devcontainerTrustFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(stateDir(env), 'sandbox', 'trusted.json');
}

export interface DevcontainerSubject {
  spec: string;
  trustPath: string;
  hash: string;
}

/**
 * What is trusted: the file's path in the repository's main checkout (its real path), so one
 * trust covers every worktree of the repository (`chalk new` makes them) holding the same
 * content, and the hash of what it proposes.
 */
export function devcontainerSubject(mainCheckout: string, d: Devcontainer): DevcontainerSubject {
  const h = createHash('sha256');
  h.update(`${d.file}\0${d.text}\0`);
  if (d.kind === 'build') h.update(`${d.dockerfile}\0${d.dockerfileText}\0`);
  return {
    spec: `${d.file} (${describeDevcontainer(d)})`,
    trustPath: join(realpathSync(mainCheckout), d.file),
    hash: `sha256:${h.digest('hex')}`,
  };
}

export function devcontainerTrustState(subject: DevcontainerSubject, env: NodeJS.ProcessEnv = process.env): TrustState {
  return trustState(subject, readTrustRecord(devcontainerTrustFile(env), USE));
}

export function trustDevcontainer(subject: DevcontainerSubject, env: NodeJS.ProcessEnv = process.env): boolean {
  return addTrust(devcontainerTrustFile(env), subject, USE);
}

export function untrustDevcontainer(subject: DevcontainerSubject, env: NodeJS.ProcessEnv = process.env): boolean {
  return removeTrust(devcontainerTrustFile(env), subject.trustPath, USE);
}

/** The line a run, `chalk doctor` and `chalk sandbox build` say about a dev container not trusted here. */
export function untrustedDevcontainerLine(d: Devcontainer, state: Exclude<TrustState, 'trusted'>): string {
  const what = state === 'changed' ? 'changed since it was trusted on this machine' : 'is not trusted on this machine';
  return `${d.file} proposes the sandbox image (${describeDevcontainer(d)}) and ${what}, so it is not used; review it, then run: chalk sandbox trust (CHALK_DEVCONTAINER=off ignores it)`;
}
