import { isToolchain, mainRoot, type ToolchainName, toolchainList } from '../../core/host.js';
import { type Config, UserError } from '../../core/plugin.js';
import { type Devcontainer, readDevcontainer } from './devcontainer.js';
import { devcontainerSubject, devcontainerTrustState } from './devcontainer-trust.js';
import { DEFAULT_IMAGE, ensureImage, inspectImage } from './image.js';
import { devcontainerImage, type LayerOptions, toolchainImage, toolchainImageName } from './image-layers.js';
import { type ImagePlan, planImage } from './image-plan.js';
import { packageList } from './keys.js';

/**
 * The I/O around image-plan.ts: what the configuration and the repository say (the dev
 * container read as hostile input, its trust on this machine, whether its image is local),
 * the plan, and the image it names, built when `ensure` is asked for.
 */

const fromWhere = (config: Config, key: string) => {
  const s = config.entries.get(key)?.source;
  return s === 'file' ? 'from .chalk/config' : s === 'env' ? 'from the environment' : '';
};

export interface ImageChoice {
  /** The image's name; null when it cannot be known without building (the default image is missing). */
  tag: string | null;
  plan: ImagePlan;
  /** Whether the image is there now. */
  present: boolean;
}

/** What the repository and the configuration ask for, as a plan (nothing built). */
export async function planFor(config: Config, env: NodeJS.ProcessEnv = process.env): Promise<ImagePlan> {
  const image = config.entries.get('CHALK_IMAGE');
  const configured =
    image && image.source !== 'default' ? { image: image.raw, from: fromWhere(config, 'CHALK_IMAGE') } : null;
  const setting = config.str('CHALK_DEVCONTAINER') === 'off' ? 'off' : 'auto';
  let devcontainer: Parameters<typeof planImage>[0]['devcontainer'] = null;
  if (!configured && setting === 'auto' && config.root) {
    let d: Devcontainer | null = null;
    try {
      d = readDevcontainer(config.root);
    } catch (err) {
      if (!(err instanceof UserError)) throw err;
      devcontainer = { error: err.message };
    }
    if (d) {
      const imagePresent = d.kind === 'image' ? (await inspectImage(d.image)) !== null : null;
      const main = await mainRoot(config.root);
      devcontainer = { d, trust: devcontainerTrustState(devcontainerSubject(main, d), env), imagePresent };
    }
  }
  const toolchains = toolchainList(config.str('CHALK_TOOLCHAIN')).filter(isToolchain) as ToolchainName[];
  const from = fromWhere(config, 'CHALK_TOOLCHAIN') || fromWhere(config, 'CHALK_SANDBOX_PACKAGES');
  return planImage({
    configured,
    devcontainerSetting: setting,
    devcontainer,
    toolchains,
    extraPackages: packageList(config.str('CHALK_SANDBOX_PACKAGES')),
    toolchainFrom: from,
  });
}

/** The image the plan names and whether it is there, without building. */
export async function currentImage(config: Config, env: NodeJS.ProcessEnv = process.env): Promise<ImageChoice> {
  const plan = await planFor(config, env);
  const s = plan.source;
  let tag: string | null;
  if (s.kind === 'configured') tag = s.image;
  else if (s.kind === 'default') tag = DEFAULT_IMAGE;
  else if (s.kind === 'toolchain') tag = await toolchainImageName(s.packages, env);
  else tag = null; // a dev container's layer is named by the id of an image that may not be built yet
  return { tag, plan, present: tag !== null && (await inspectImage(tag)) !== null };
}

/**
 * The image a run uses, built when it is missing or its inputs changed (a configured image is
 * never built: a missing one is one line). Returns its name and the plan that chose it.
 */
export async function ensurePlannedImage(
  config: Config,
  opts: LayerOptions = {},
): Promise<{ tag: string; plan: ImagePlan }> {
  const env = opts.env ?? process.env;
  const plan = await planFor(config, env);
  const s = plan.source;
  if (s.kind === 'configured') {
    await ensureImage(s.image, { env, onLine: opts.onLine });
    return { tag: s.image, plan };
  }
  if (s.kind === 'default') {
    await ensureImage(DEFAULT_IMAGE, { env, onLine: opts.onLine });
    return { tag: DEFAULT_IMAGE, plan };
  }
  if (s.kind === 'toolchain') return { tag: await toolchainImage(s.packages, opts), plan };
  if (!config.root) throw new UserError('a dev container needs the repository it is in');
  return { tag: await devcontainerImage(config.root, s.devcontainer, opts), plan };
}
