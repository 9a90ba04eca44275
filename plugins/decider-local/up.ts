import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { displayUrl, entryFromConfig, isLocalUrl } from '../../core/decider.js';
import { acquireLock, ensureNpmPrefix, LockTimeout, run } from '../../core/host.js';
import { type Config, UserError } from '../../core/plugin.js';
import { storeTarget, storeTimeoutMs } from '../../core/store-entry.js';
import { backfillLocal } from './backfill.js';
import { measureMedianMs } from './bench.js';
import { TRANSFORMERS_PACKAGE, TRANSFORMERS_VERSION } from './embed/loader.js';
import { EMBED_MODEL } from './embed/wire.js';
import { type Installed, modelRevision, readInstalled, writeInstalled } from './installed.js';
import { type LocalDeciderPaths, localDeciderPaths } from './paths.js';
import {
  portOf,
  ServiceError,
  type ServicePorts,
  serviceClients,
  servicesRunning,
  startServices,
  stopServices,
  waitHealthy,
} from './services.js';

/** What `chalk decider up` installs and downloads (versions tracked, not pinned: the latest release). */
export const DECIDER_PACKAGE = 'strands-decider';
export const DECIDER_MODEL = 'StrandsAgents/strands-decider-2B-hobson-v19';
/** The embedding model's files transformers.js reads (the ONNX export, tokenizer and configs). */
export const EMBED_MODEL_FILES = ['onnx/model.onnx', '*.json'];
/** How long `up` waits for both services (the first start loads ~4.5 GB). */
export const UP_HEALTH_MS = 300_000;
/** How long `up` waits for another `up` or a run starting them. */
const UP_LOCK_MS = 300_000;

export const UV_HINT =
  'chalk decider up needs uv to install strands-decider, and uv is not installed: install it (curl -LsSf https://astral.sh/uv/install.sh | sh, or brew install uv) and run chalk decider up again';

/** The services' ports and idle time from the configuration; both URLs must be this machine's. */
export function localSettings(config: Config): { ports: ServicePorts; idleMs: number } {
  for (const key of ['CHALK_DECIDER_URL', 'CHALK_EMBED_URL']) {
    const url = config.str(key);
    if (!isLocalUrl(url)) {
      throw new UserError(
        `the local decider runs on this machine, but ${key} is ${displayUrl(url)}: unset it (or point it at 127.0.0.1) to use the local decider`,
      );
    }
  }
  return {
    ports: { decider: portOf(config.str('CHALK_DECIDER_URL')), embed: portOf(config.str('CHALK_EMBED_URL')) },
    idleMs: config.num('CHALK_DECIDER_IDLE_MINUTES') * 60_000,
  };
}

/** How long a run's background start waits for health: CHALK_DECIDER_TIMEOUT seconds, `auto` 120. */
export function startTimeoutMs(config: Config): number {
  const raw = config.str('CHALK_DECIDER_TIMEOUT');
  return raw === 'auto' ? 120_000 : Number(raw) * 1000;
}

function firstLine(r: { stdout: string; stderr: string }): string {
  return (r.stderr.trim() || r.stdout.trim()).split('\n')[0] ?? '';
}

/** `hf download` through uv (huggingface_hub's own CLI) into the state directory's cache; the snapshot path it printed. */
async function hfDownload(paths: LocalDeciderPaths, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const r = await run('uv', ['tool', 'run', '--from', 'huggingface_hub', 'hf', 'download', ...args], {
    env: { ...env, HF_HOME: paths.hfHome, HF_HUB_DISABLE_TELEMETRY: '1' },
  });
  const snapshot = r.stdout.trim().split('\n').pop()?.trim() ?? '';
  if (r.code !== 0 || !snapshot.includes('/snapshots/') || !existsSync(snapshot)) {
    throw new UserError(
      `downloading ${args[0]} failed${r.code !== 0 ? ` (exit ${r.code})` : ''}: ${firstLine(r) || 'hf printed no snapshot path'}`,
    );
  }
  return snapshot;
}

const revisionOf = (snapshot: string) => snapshot.replace(/\/+$/, '').split('/').pop() ?? '';

/** The base model a strands-decider checkpoint names in its config (`base_model`, `base_revision`), if any. */
export function baseModelOf(checkpoint: string): { model: string; revision: string | null } | null {
  for (const name of ['strands_decider_config.json', 'hobson_config.json']) {
    try {
      const c = JSON.parse(readFileSync(join(checkpoint, name), 'utf8')) as {
        base_model?: unknown;
        base_revision?: unknown;
      };
      if (typeof c.base_model === 'string' && /^[\w.-]+\/[\w.-]+$/.test(c.base_model)) {
        return { model: c.base_model, revision: typeof c.base_revision === 'string' ? c.base_revision : null };
      }
    } catch {
      // not this file
    }
  }
  return null;
}

/** Installs strands-decider with uv and downloads both models; returns the record without a benchmark. */
async function install(paths: LocalDeciderPaths, env: NodeJS.ProcessEnv, say: (l: string) => void): Promise<Installed> {
  const apple = process.platform === 'darwin' && process.arch === 'arm64';
  const spec = apple ? `${DECIDER_PACKAGE}[mlx]` : DECIDER_PACKAGE;
  say(`installing ${spec} (uv tool install)`);
  const inst = await run('uv', ['tool', 'install', '--upgrade', spec], { env });
  if (inst.code !== 0) throw new UserError(`uv tool install ${spec} failed (exit ${inst.code}): ${firstLine(inst)}`);
  const binDir = await run('uv', ['tool', 'dir', '--bin'], { env });
  const bin = join(binDir.stdout.trim(), DECIDER_PACKAGE);
  if (binDir.code !== 0 || !existsSync(bin)) {
    throw new UserError(`uv installed ${DECIDER_PACKAGE}, but its executable is not in uv's bin directory (${bin})`);
  }
  const list = await run('uv', ['tool', 'list'], { env });
  const version = new RegExp(`^${DECIDER_PACKAGE} v?(\\S+)`, 'm').exec(list.stdout)?.[1] ?? null;
  let device: string | null = null;
  if (apple) {
    const help = await run(bin, ['serve', '--help'], { env });
    device = /\bmlx\b/.test(help.stdout) ? 'mlx' : 'mps';
  }
  say(`downloading ${DECIDER_MODEL} (the first time about 4.5 GB with its base model)`);
  const checkpoint = await hfDownload(paths, [DECIDER_MODEL], env);
  const baseOf = baseModelOf(checkpoint);
  let base: Installed['base'] = null;
  if (baseOf) {
    const snap = await hfDownload(
      paths,
      [baseOf.model, ...(baseOf.revision ? ['--revision', baseOf.revision] : [])],
      env,
    );
    base = { model: baseOf.model, revision: revisionOf(snap) };
  }
  say(`downloading ${EMBED_MODEL} (about 130 MB)`);
  const embedSnap = await hfDownload(paths, [EMBED_MODEL, '--include', ...EMBED_MODEL_FILES], env);
  say(`installing ${TRANSFORMERS_PACKAGE}@${TRANSFORMERS_VERSION} for the embedding service`);
  await ensureNpmPrefix(
    paths.embedRuntime,
    [{ name: TRANSFORMERS_PACKAGE, version: TRANSFORMERS_VERSION }],
    `${TRANSFORMERS_PACKAGE} for the embedding service`,
    env,
  );
  return {
    installedAt: new Date().toISOString(),
    package: DECIDER_PACKAGE,
    packageVersion: version,
    bin,
    device,
    decider: { model: DECIDER_MODEL, revision: revisionOf(checkpoint), path: checkpoint },
    base,
    embed: { model: EMBED_MODEL, revision: revisionOf(embedSnap), path: embedSnap, runtime: paths.embedRuntime },
    benchMs: null,
    benchedAt: null,
  };
}

export interface UpResult {
  /** False when a running copy was found. */
  started: boolean;
  installed: Installed;
}

/**
 * `chalk decider up`: installs strands-decider with uv, downloads its model and the embedding
 * model, starts both services on 127.0.0.1, measures the median of 5 warm questions and records
 * the revisions and that median (`installed.json`). One copy per machine: under the `up` lock, a
 * running copy is found and reported instead.
 */
export async function deciderUp(opts: {
  config: Config;
  env?: NodeJS.ProcessEnv;
  say: (line: string) => void;
}): Promise<UpResult> {
  const env = opts.env ?? process.env;
  const { ports, idleMs } = localSettings(opts.config);
  const paths = localDeciderPaths(env);
  const uv = await run('uv', ['--version'], { env });
  if (uv.code === 127) throw new UserError(UV_HINT);
  mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
  let release: () => void;
  try {
    release = await acquireLock(paths.upLock, UP_LOCK_MS);
  } catch (err) {
    if (err instanceof LockTimeout)
      throw new UserError(`timed out waiting for another chalk starting the local decider (lock ${paths.upLock})`);
    throw err;
  }
  const entry = entryFromConfig(opts.config);
  try {
    const existing = readInstalled(paths.installed);
    const backfill = async () =>
      opts.say(
        await backfillLocal({
          target: storeTarget(opts.config, env),
          timeoutMs: storeTimeoutMs(opts.config),
          embedPort: ports.embed,
        }),
      );
    if (existing && servicesRunning(paths)) {
      await waitHealthy({ paths, ports, entry, timeoutMs: UP_HEALTH_MS }).catch(rethrow);
      await backfill();
      return { started: false, installed: existing };
    }
    const fresh = await install(paths, env, opts.say);
    await stopServices(paths); // leftovers: one service alive without the other
    opts.say(
      `starting the decider on 127.0.0.1:${ports.decider} and the embedding service on 127.0.0.1:${ports.embed}`,
    );
    startServices({ paths, installed: fresh, ports, idleMs, env });
    const up = await waitHealthy({ paths, ports, entry, timeoutMs: UP_HEALTH_MS }).catch(rethrow);
    opts.say(`both are up after ${(up.ms / 1000).toFixed(1)}s; measuring 5 warm questions`);
    const { decider } = serviceClients(paths, ports, entry);
    let benchMs: number;
    try {
      benchMs = await measureMedianMs(decider);
    } catch (err) {
      throw new UserError(`the local decider is up but ${(err as Error).message} (log: ${paths.deciderLog})`);
    } finally {
      await decider.close();
    }
    const installed: Installed = { ...fresh, benchMs, benchedAt: new Date().toISOString() };
    writeInstalled(paths.installed, installed);
    await backfill();
    return { started: true, installed };
  } finally {
    release();
  }
}

function rethrow(err: unknown): never {
  if (err instanceof ServiceError) throw new UserError(err.message);
  throw err;
}

/** The lines `up` and `status` print about an installation. */
export function describeInstalled(i: Installed): string[] {
  return [
    `decider    ${modelRevision(i.decider)} (${i.package}${i.packageVersion ? ` ${i.packageVersion}` : ''}${i.device ? `, --device ${i.device}` : ''})`,
    ...(i.base ? [`base model ${modelRevision(i.base)}`] : []),
    `embeddings ${modelRevision(i.embed)}`,
    `median     ${i.benchMs === null ? 'not measured' : `${i.benchMs} ms per question (5 warm questions)${i.benchMs >= 1000 ? ': over 1 s, so CHALK_DECIDER=on records as shadow here' : ''}`}`,
  ];
}

/** `chalk decider down`: stops both services and the watcher. Returns what was running. */
export async function deciderDown(env: NodeJS.ProcessEnv = process.env): Promise<string[]> {
  return stopServices(localDeciderPaths(env));
}
