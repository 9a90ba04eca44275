import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { SHARE_DIR } from '../../core/host.js';
import { UserError } from '../../core/plugin.js';
import type { Devcontainer } from './devcontainer.js';
import { buildFromContext, CONTEXT_LABEL, DEFAULT_IMAGE, ensureImage, extraCaBundle, inspectImage } from './image.js';
import { devcontainerBuildName, layeredName } from './image-plan.js';
import { sandboxLock } from './locks.js';

/**
 * The images Chalk layers on others: a toolchain on the default image (Debian packages), and
 * Chalk's own layer on a dev container's image. Each is named by a hash of every input
 * (image-plan.ts `layeredName`), built on first need, rebuilt when an input changes, and built
 * by one process at a time on this machine (a lock per name; the others wait, then find it).
 */

const LAYERS = join(SHARE_DIR, 'sandbox', 'layers');
const layerFile = (name: string) => readFileSync(join(LAYERS, name), 'utf8');
/** How long a second run waits for another's build of the same image. */
const BUILD_WAIT_MS = 30 * 60_000;

export interface LayerOptions {
  env?: NodeJS.ProcessEnv;
  onLine?: (line: string) => void;
  /** Said once before a build starts (what is built and why it takes a while). */
  onBuild?: (line: string) => void;
  force?: boolean;
}

const caText = (env: NodeJS.ProcessEnv) => {
  const ca = extraCaBundle(env);
  return ca ? readFileSync(ca, 'utf8') : '';
};

async function idOf(image: string): Promise<string> {
  const info = await inspectImage(image);
  if (!info) throw new UserError(`image ${image} is not present locally`);
  return info.id;
}

/** Builds `tag` from `files` (name -> text) unless an image of that name carries `hash`; under the tag's lock. */
async function buildLayer(
  tag: string,
  hash: string,
  files: Record<string, string>,
  b: { buildargs: Record<string, string>; labels?: Record<string, string>; what: string },
  opts: LayerOptions,
): Promise<boolean> {
  const fresh = async () => !opts.force && (await inspectImage(tag))?.contextHash === hash;
  if (await fresh()) return false;
  const env = opts.env ?? process.env;
  const release = await sandboxLock('build', tag, env, BUILD_WAIT_MS);
  const dir = mkdtempSync(join(tmpdir(), 'chalk-layer-'));
  try {
    if (await fresh()) return false;
    opts.onBuild?.(`building sandbox image ${tag} (${b.what}); once per machine, until its inputs change`);
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    await buildFromContext({
      context: dir,
      src: Object.keys(files),
      tag,
      buildargs: b.buildargs,
      labels: { [CONTEXT_LABEL]: hash, ...b.labels },
      onLine: opts.onLine,
      what: `sandbox image ${tag}`,
    });
    return true;
  } finally {
    rmSync(dir, { recursive: true, force: true });
    release();
  }
}

/** The toolchain image for `packages` on the default image (built first when missing); its name. */
export async function toolchainImage(packages: readonly string[], opts: LayerOptions = {}): Promise<string> {
  const env = opts.env ?? process.env;
  await ensureImage(DEFAULT_IMAGE, { env, onLine: opts.onLine });
  const recipe = layerFile('toolchain.Dockerfile');
  const ca = caText(env);
  const { tag, hash } = layeredName('tc', [recipe, await idOf(DEFAULT_IMAGE), packages.join(' '), ca]);
  await buildLayer(
    tag,
    hash,
    { Dockerfile: recipe, 'chalk-ca.pem': ca },
    {
      buildargs: { CHALK_FROM: DEFAULT_IMAGE, CHALK_PACKAGES: packages.join(' ') },
      labels: { 'chalk.packages': packages.join(' ') },
      what: `apt: ${packages.join(' ')}`,
    },
    opts,
  );
  return tag;
}

/** The name the toolchain image of `packages` has now, without building anything (null: the default image is missing). */
export async function toolchainImageName(
  packages: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<string | null> {
  const base = await inspectImage(DEFAULT_IMAGE);
  if (!base) return null;
  return layeredName('tc', [layerFile('toolchain.Dockerfile'), base.id, packages.join(' '), caText(env)]).tag;
}

/** The repository's own dev container build (built when its name is missing, or forced). */
async function devcontainerBase(root: string, d: Devcontainer, opts: LayerOptions): Promise<string> {
  if (d.kind === 'image') return d.image;
  const tag = devcontainerBuildName(d);
  if (!opts.force && (await inspectImage(tag))) return tag;
  opts.onBuild?.(`building the dev container's image ${tag} from ${d.dockerfile} (trusted on this machine)`);
  const context = join(root, d.context);
  await buildFromContext({
    context,
    // The context's top entries; tar-fs walks them without following a link, and dockerode applies its .dockerignore.
    src: readdirSync(context),
    dockerfile: d.context === '' ? d.dockerfile : posix.relative(d.context, d.dockerfile),
    tag,
    buildargs: d.args,
    ...(d.target ? { target: d.target } : {}),
    labels: { 'chalk.devcontainer': d.file },
    onLine: opts.onLine,
    what: `the dev container's image (${d.dockerfile})`,
  });
  return tag;
}

/** The dev container's image with Chalk's layer on top; its name. */
export async function devcontainerImage(root: string, d: Devcontainer, opts: LayerOptions = {}): Promise<string> {
  const env = opts.env ?? process.env;
  await ensureImage(DEFAULT_IMAGE, { env, onLine: opts.onLine });
  const from = await devcontainerBase(root, d, opts);
  const recipe = layerFile('chalk-layer.Dockerfile');
  const script = layerFile('layer-packages.sh');
  const ca = caText(env);
  const { tag, hash } = layeredName('dc', [recipe, script, await idOf(from), await idOf(DEFAULT_IMAGE), ca]);
  await buildLayer(
    tag,
    hash,
    { Dockerfile: recipe, 'layer-packages.sh': script, 'chalk-ca.pem': ca },
    {
      buildargs: { CHALK_FROM: from, CHALK_DEFAULT: DEFAULT_IMAGE },
      labels: { 'chalk.devcontainer': d.file },
      what: `Chalk's layer on ${from}`,
    },
    opts,
  );
  return tag;
}
