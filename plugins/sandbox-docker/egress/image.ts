import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PACKAGE_ROOT, SHARE_DIR } from '../../../core/host.js';
import { UserError } from '../../../core/plugin.js';
import { describeDockerError, docker, statusOf } from '../docker.js';
import {
  BASE_LABEL,
  type BuildOptions,
  baseMissing,
  buildFromContext,
  CONTEXT_LABEL,
  DEFAULT_IMAGE,
  effectiveBase,
  extraCaBundle,
  inputsHash,
} from '../image.js';

/**
 * The egress image: share/egress (Dockerfile, install script, error pages), the package
 * fetcher the sandbox image uses too, the host's extra CA, and the daemon as built
 * (dist/plugins/sandbox-docker/egress/daemon). Named by a hash of all of it and its base, so a
 * changed daemon is a new image, built on first need.
 */

const SHARED = ['Dockerfile', 'install.sh', 'ERR_CHALK_EGRESS', 'ERR_CHALK_PRIVATE'] as const;
export const DAEMON_DIR = join(PACKAGE_ROOT, 'dist', 'plugins', 'sandbox-docker', 'egress', 'daemon');
export const EGRESS_REPO = 'chalk-egress';

interface Input {
  name: string;
  bytes: Buffer;
}

/** The inputs, read where they are (nothing copied): the share files, the fetcher, the CA, the daemon. */
function egressInputs(env: NodeJS.ProcessEnv): Input[] {
  let daemon: string[];
  try {
    daemon = readdirSync(DAEMON_DIR)
      .filter((f) => f.endsWith('.js'))
      .sort();
  } catch {
    daemon = [];
  }
  if (!daemon.includes('main.js')) {
    throw new UserError(`the egress daemon is not built (${DAEMON_DIR}); run: npm run build`);
  }
  const ca = extraCaBundle(env);
  return [
    ...SHARED.map((f) => ({ name: f, bytes: readFileSync(join(SHARE_DIR, 'egress', f)) })),
    { name: 'fetch-package.cjs', bytes: readFileSync(join(SHARE_DIR, 'sandbox', 'fetch-package.cjs')) },
    { name: 'chalk-ca.pem', bytes: ca ? readFileSync(ca) : Buffer.alloc(0) },
    ...daemon.map((f) => ({ name: `daemon/${f}`, bytes: readFileSync(join(DAEMON_DIR, f)) })),
  ];
}

/** The egress image's tag for these inputs on this base: `chalk-egress:<hash prefix>`. */
export function egressTag(inputs: readonly Input[], base: string): { tag: string; hash: string } {
  const hash = inputsHash(inputs, base);
  return { tag: `${EGRESS_REPO}:${hash.slice(0, 12)}`, hash };
}

/** The inputs written out as a build context in a temporary directory. */
function materialize(inputs: readonly Input[]): { dir: string; files: string[]; dispose(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'chalk-egress-build-'));
  mkdirSync(join(dir, 'daemon'));
  for (const i of inputs) writeFileSync(join(dir, i.name), i.bytes);
  return { dir, files: inputs.map((i) => i.name), dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

async function exists(tag: string): Promise<boolean> {
  try {
    await (await docker()).getImage(tag).inspect();
    return true;
  } catch (err) {
    if (statusOf(err) === 404) return false;
    throw new UserError(describeDockerError(err));
  }
}

/** The egress image's tag for what is on this machine now (nothing built). */
export async function egressImageTag(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return egressTag(egressInputs(env), await effectiveBase(DEFAULT_IMAGE, env)).tag;
}

/**
 * The egress image's tag, built when missing: on the base the sandbox image was made on
 * (CHALK_SANDBOX_BASE, else the default image's own base), so one base serves both.
 */
export async function ensureEgressImage(opts: BuildOptions = {}): Promise<string> {
  const env = opts.env ?? process.env;
  const base = await effectiveBase(DEFAULT_IMAGE, env);
  const inputs = egressInputs(env);
  const { tag, hash } = egressTag(inputs, base);
  if (!opts.force && (await exists(tag))) return tag;
  const context = materialize(inputs);
  try {
    await buildFromContext({
      context: context.dir,
      src: context.files,
      tag,
      buildargs: { CHALK_SANDBOX_BASE: base },
      labels: { [CONTEXT_LABEL]: hash, [BASE_LABEL]: base },
      what: 'egress image',
      onLine: opts.onLine,
      fromFailed: baseMissing('egress image', base),
    });
    return tag;
  } finally {
    context.dispose();
  }
}
