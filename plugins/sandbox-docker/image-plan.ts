import { createHash } from 'node:crypto';
import type { ToolchainName, TrustState } from '../../core/host.js';
import { type Devcontainer, describeDevcontainer } from './devcontainer.js';
import { untrustedDevcontainerLine } from './devcontainer-trust.js';
import { packagesFor } from './toolchain-packages.js';

/**
 * Which image a repository's sandboxes start from, as a pure rule: CHALK_IMAGE when someone set
 * it; else the repository's dev container, once trusted here, with Chalk's layer on top; else
 * the toolchains (and extra packages) it declares, layered on the default image; else the
 * default image. What is not used is said, one line each (`notes`).
 */

export type ImageSource =
  | { kind: 'configured'; image: string; why: string }
  | { kind: 'devcontainer'; devcontainer: Devcontainer; why: string }
  | { kind: 'toolchain'; toolchains: ToolchainName[]; packages: string[]; why: string }
  | { kind: 'default'; why: string };

export interface PlanInput {
  /** CHALK_IMAGE when it is set (not its default), and where. */
  configured: { image: string; from: string } | null;
  devcontainerSetting: 'auto' | 'off';
  /** The dev container read (or why it could not be), its trust here, whether its `image` is local. */
  devcontainer: { d: Devcontainer; trust: TrustState; imagePresent: boolean | null } | { error: string } | null;
  toolchains: ToolchainName[];
  extraPackages: string[];
  /** Where CHALK_TOOLCHAIN and CHALK_SANDBOX_PACKAGES came from, for the reason. */
  toolchainFrom: string;
}

export interface ImagePlan {
  source: ImageSource;
  notes: string[];
}

export function planImage(input: PlanInput): ImagePlan {
  const notes: string[] = [];
  if (input.configured) {
    return {
      source: { kind: 'configured', image: input.configured.image, why: `CHALK_IMAGE ${input.configured.from}` },
      notes,
    };
  }
  const dc = input.devcontainerSetting === 'auto' ? input.devcontainer : null;
  if (dc && 'error' in dc) {
    notes.push(`${dc.error}; the dev container is not used`);
  } else if (dc) {
    const { d } = dc;
    if (d.kind === 'image' && dc.imagePresent === false) {
      notes.push(
        `${d.file} names image ${d.image}, which is not present locally (Chalk pulls from no registry), so it is not used; pull or build it, then run again`,
      );
    } else if (dc.trust !== 'trusted') {
      notes.push(untrustedDevcontainerLine(d, dc.trust));
    } else {
      return {
        source: { kind: 'devcontainer', devcontainer: d, why: `${d.file}: ${describeDevcontainer(d)}, trusted here` },
        notes,
      };
    }
  }
  if (input.toolchains.length > 0 || input.extraPackages.length > 0) {
    const packages = packagesFor(input.toolchains, input.extraPackages);
    const named = [
      ...(input.toolchains.length ? [`toolchain ${input.toolchains.join(', ')}`] : []),
      ...(input.extraPackages.length ? [`packages ${input.extraPackages.join(', ')}`] : []),
    ].join(' and ');
    return {
      source: { kind: 'toolchain', toolchains: input.toolchains, packages, why: `${named} ${input.toolchainFrom}` },
      notes,
    };
  }
  return { source: { kind: 'default', why: 'the default: no CHALK_IMAGE, dev container or CHALK_TOOLCHAIN' }, notes };
}

// --- names ----------------------------------------------------------------------------------

const sha = (parts: readonly string[]) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(`${p}\0`);
  return h.digest('hex');
};

/** A layered image's name and the hash its label carries: the prefix and 12 hex of the hash of every input. */
export function layeredName(prefix: 'tc' | 'dc', inputs: readonly string[]): { tag: string; hash: string } {
  const hash = sha([prefix, ...inputs]);
  return { tag: `chalk-sandbox:${prefix}-${hash.slice(0, 12)}`, hash };
}

/** The name of a repository's own dev container build: its inputs as declared (the context's files are not in it). */
export function devcontainerBuildName(d: Extract<Devcontainer, { kind: 'build' }>): string {
  const args = Object.entries(d.args)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([k, v]) => `${k}=${v}`);
  return `chalk-devcontainer:${sha([d.text, d.dockerfile, d.dockerfileText, d.context, d.target ?? '', ...args]).slice(0, 12)}`;
}
