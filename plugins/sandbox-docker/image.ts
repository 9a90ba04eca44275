import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SHARE_DIR } from '../../core/host.js';
import { UserError } from '../../core/plugin.js';
import { describeDockerError, docker, statusOf } from './docker.js';

export const DEFAULT_IMAGE = 'chalk-sandbox:local';
export const DEFAULT_BASE = 'node:22-bookworm-slim';
/** Files of share/sandbox that make up the build context (share/sandbox/build-image.sh lists the same). */
export const CONTEXT_FILES = [
  'Dockerfile',
  'install-packages.sh',
  'bootstrap-npm.cjs',
  'fetch-package.cjs',
  'node-proxy.cjs',
] as const;
export const CONTEXT_LABEL = 'chalk.context';
/** The base an image was built on, so a rebuild without CHALK_SANDBOX_BASE keeps it. */
export const BASE_LABEL = 'chalk.base';

/** The extra CA bundle the image should trust: CHALK_SANDBOX_CA, else NODE_EXTRA_CA_CERTS, else SSL_CERT_FILE. */
export function extraCaBundle(env: NodeJS.ProcessEnv = process.env): string | null {
  for (const name of ['CHALK_SANDBOX_CA', 'NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE']) {
    const v = env[name];
    if (!v) continue;
    if (!existsSync(v)) {
      throw new UserError(`${name} names ${v}, which does not exist; point it at a PEM bundle or unset it`);
    }
    return v;
  }
  return null;
}

/** Inputs' identity: each one's name in the context and its bytes, in order, then the base. */
export function inputsHash(inputs: readonly { name: string; bytes: Buffer | string }[], base: string): string {
  const h = createHash('sha256');
  for (const i of inputs) {
    h.update(`${i.name}\0`);
    h.update(i.bytes);
    h.update('\0');
  }
  h.update(`base\0${base}`);
  return h.digest('hex');
}

/** A build context's identity: each file's name and bytes, in order, then the base (build-image.sh hashes the same). */
export function contextHash(dir: string, files: readonly string[], base: string): string {
  return inputsHash(
    files.map((f) => ({ name: f, bytes: readFileSync(join(dir, f)) })),
    base,
  );
}

export interface BuildContext {
  dir: string;
  files: string[];
  base: string;
  /** Identifies the inputs; the image carries it as a label, so an unchanged build is skipped. */
  hash: string;
  caBundle: string | null;
  dispose(): void;
}

/** A temporary build context: the shipped files plus `chalk-ca.pem` (empty when there is no extra CA). */
export function prepareContext(env: NodeJS.ProcessEnv = process.env, fallbackBase = DEFAULT_BASE): BuildContext {
  const src = join(SHARE_DIR, 'sandbox');
  const base = env.CHALK_SANDBOX_BASE || fallbackBase;
  const caBundle = extraCaBundle(env);
  const dir = mkdtempSync(join(tmpdir(), 'chalk-sandbox-build-'));
  const files = [...CONTEXT_FILES, 'chalk-ca.pem'];
  for (const f of CONTEXT_FILES) copyFileSync(join(src, f), join(dir, f));
  if (caBundle) copyFileSync(caBundle, join(dir, 'chalk-ca.pem'));
  else writeFileSync(join(dir, 'chalk-ca.pem'), '');
  return {
    dir,
    files,
    base,
    hash: contextHash(dir, files, base),
    caBundle,
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export interface ImageInfo {
  id: string;
  contextHash: string | null;
  base: string | null;
  sizeBytes: number;
}

export async function inspectImage(image: string): Promise<ImageInfo | null> {
  const d = await docker();
  try {
    const info = await d.getImage(image).inspect();
    const labels = info.Config?.Labels ?? {};
    return {
      id: info.Id,
      contextHash: labels[CONTEXT_LABEL] ?? null,
      base: labels[BASE_LABEL] ?? null,
      sizeBytes: info.Size,
    };
  } catch (err) {
    if (statusOf(err) === 404) return null;
    throw new UserError(describeDockerError(err));
  }
}

/** The base a build of `tag` uses: CHALK_SANDBOX_BASE, else the one the existing image was made on, else the default. */
export async function effectiveBase(tag = DEFAULT_IMAGE, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return env.CHALK_SANDBOX_BASE || (await inspectImage(tag))?.base || DEFAULT_BASE;
}

export interface BuildOptions {
  tag?: string;
  env?: NodeJS.ProcessEnv;
  /** Build even when the image carries the same context hash. */
  force?: boolean;
  /** Each line of the builder's output. */
  onLine?: (line: string) => void;
}

/**
 * Builds the sandbox image through the Docker API (a tar of the context).
 * Returns false when an image with the same inputs already exists.
 */
export async function buildSandboxImage(opts: BuildOptions = {}): Promise<boolean> {
  const tag = opts.tag ?? DEFAULT_IMAGE;
  const existing = await inspectImage(tag);
  const ctx = prepareContext(opts.env, existing?.base ?? DEFAULT_BASE);
  try {
    if (!opts.force && existing?.contextHash === ctx.hash) return false;
    await buildFromContext({
      context: ctx.dir,
      src: ctx.files,
      tag,
      buildargs: { CHALK_SANDBOX_BASE: ctx.base },
      labels: { [CONTEXT_LABEL]: ctx.hash, [BASE_LABEL]: ctx.base },
      onLine: opts.onLine,
      fromFailed: baseMissing('sandbox image', ctx.base),
    });
    return true;
  } finally {
    ctx.dispose();
  }
}

/** The failure line for a base image that is not there and cannot be pulled. */
export const baseMissing =
  (what: string, base: string) =>
  (first: string): string =>
    `${what} build failed: the base image ${base} could not be pulled (${first}); set CHALK_SANDBOX_BASE to a local Debian-based image (share/sandbox/make-base-image.sh makes one)`;

export interface ContextBuild {
  /** The directory sent as the build context, and the entries of it to send. */
  context: string;
  src: string[];
  /** The Dockerfile's path inside the context (default `Dockerfile`). */
  dockerfile?: string;
  tag: string;
  buildargs?: Record<string, string>;
  labels?: Record<string, string>;
  target?: string;
  onLine?: (line: string) => void;
  /** The line for a failure at a FROM (a base that is not there and cannot be pulled). */
  fromFailed?: (first: string) => string;
  /** What is built, for the failure line: `sandbox image`, `the dev container's image`. */
  what?: string;
}

/** One `docker build` through the API; a failure is one UserError line with the builder's last output. */
export async function buildFromContext(b: ContextBuild): Promise<void> {
  const d = await docker();
  const what = b.what ?? 'sandbox image';
  let stream: NodeJS.ReadableStream;
  try {
    stream = await d.buildImage(
      { context: b.context, src: b.src },
      {
        t: b.tag,
        ...(b.dockerfile ? { dockerfile: b.dockerfile } : {}),
        ...(b.target ? { target: b.target } : {}),
        buildargs: b.buildargs ?? {},
        labels: b.labels ?? {},
        rm: true,
        forcerm: true,
      },
    );
  } catch (err) {
    throw new UserError(`${what} build failed: ${describeDockerError(err)}`);
  }
  const tail: string[] = [];
  await new Promise<void>((resolve, reject) => {
    d.modem.followProgress(
      stream,
      (err: Error | null, events: Array<{ error?: string; errorDetail?: { message?: string } }>) => {
        const failed = err?.message ?? events.find((e) => e.error)?.error;
        if (!failed) return resolve();
        const first = failed.split('\n')[0] ?? failed;
        if (b.fromFailed && / FROM /.test(tail[tail.length - 1] ?? ''))
          return reject(new UserError(b.fromFailed(first)));
        const lines = tail.slice(-5).join(' | ');
        reject(new UserError(`${what} build failed: ${first}${lines ? ` (last output: ${lines})` : ''}`));
      },
      (event: { stream?: string }) => {
        for (const line of (event.stream ?? '').split('\n')) {
          if (line.trim() === '') continue;
          tail.push(line.trim());
          if (tail.length > 20) tail.shift();
          b.onLine?.(line);
        }
      },
    );
  });
}

/**
 * A run's image check: the default image is built when missing; a custom
 * image is never built, only used.
 */
export async function ensureImage(image: string, opts: BuildOptions = {}): Promise<void> {
  if (await inspectImage(image)) return;
  if (image !== DEFAULT_IMAGE) {
    throw new UserError(`sandbox image '${image}' not found locally; pull or build it first`);
  }
  await buildSandboxImage({ ...opts, tag: image, force: true });
}
