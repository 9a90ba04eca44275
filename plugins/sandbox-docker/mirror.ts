import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { type MirrorRepo, OBJECT_ID, SANDBOX_PATHS } from '../../core/plugin.js';
import { describeDockerError, docker, statusOf } from './docker.js';
import { buildFromContext } from './image.js';
import { sandboxLock } from './locks.js';

/**
 * Sandbox mirrors on the Docker engine: a repository's history up to one commit, as an image
 * layer on the image sandboxes start from (its bare repository at SANDBOX_PATHS.mirror, root's
 * files in a read-only root file system: the agent reads it and cannot change or replace it).
 * A sandbox of the mirror image borrows those objects (clone.sh's alternates) and is streamed
 * only the ticket's commits beyond them. Nothing of the host is mounted: the repository goes to
 * the engine once, as a build context, over the API. The build runs nothing (a COPY only), so
 * no code of the image or the repository runs while it is made.
 *
 * An image is found by its labels: the repository (the SHA-256 of its main checkout's real
 * path), the commit it holds, and the id of the image it is layered on (a rebuilt sandbox image
 * has a new id, so its mirrors are made again).
 */

export const MIRROR_LABELS = {
  repo: 'chalk.mirror.repo',
  root: 'chalk.mirror.root',
  base: 'chalk.mirror.base',
  from: 'chalk.mirror.from',
  /** The machine `root` is a path on (an engine may serve more than one). */
  host: 'chalk.mirror.host',
  /** When it was made, in milliseconds (the engine's own time has seconds only). */
  made: 'chalk.mirror.made',
} as const;

const MIRROR_NAME = 'chalk-mirror';
/** Mirrors a repository keeps for one image: the newest and the one before (a run may still use it). */
const KEEP = 2;
/** How long a second process waits for another's build of the same mirror. */
const BUILD_WAIT_MS = 10 * 60_000;

/** A mirror image's tag: a hash of the repository, the image it is layered on and its commit. */
export function mirrorTag(repo: string, imageId: string, base: string): string {
  const h = createHash('sha256').update(`${repo}\0${imageId}\0${base}`).digest('hex');
  return `${MIRROR_NAME}:${h.slice(0, 32)}`;
}

/** The build's recipe: the image by id, the repository copied in (root's, as COPY makes it). */
export const MIRROR_DOCKERFILE = `ARG CHALK_FROM\nFROM \${CHALK_FROM}\nCOPY mirror.git ${SANDBOX_PATHS.mirror}\n`;

export interface MirrorImage {
  id: string;
  tags: string[];
  repo: string;
  root: string;
  base: string;
  from: string;
  host: string;
  /** Unix milliseconds. */
  made: number;
}

/** Mirror images whose labels match, newest first. */
export async function listMirrors(labels: Partial<Record<keyof typeof MIRROR_LABELS, string>> = {}) {
  const d = await docker();
  const filter = [
    MIRROR_LABELS.repo,
    ...Object.entries(labels).map(([k, v]) => `${MIRROR_LABELS[k as keyof typeof MIRROR_LABELS]}=${v}`),
  ];
  const found = (await d.listImages({ filters: { label: filter } })) as {
    Id: string;
    RepoTags?: string[] | null;
    Labels?: Record<string, string> | null;
    Created: number;
  }[];
  return found
    .map(
      (i): MirrorImage => ({
        id: i.Id,
        tags: (i.RepoTags ?? []).filter((t) => t.startsWith(`${MIRROR_NAME}:`)),
        repo: i.Labels?.[MIRROR_LABELS.repo] ?? '',
        root: i.Labels?.[MIRROR_LABELS.root] ?? '',
        base: i.Labels?.[MIRROR_LABELS.base] ?? '',
        from: i.Labels?.[MIRROR_LABELS.from] ?? '',
        host: i.Labels?.[MIRROR_LABELS.host] ?? '',
        made: Number(i.Labels?.[MIRROR_LABELS.made]) || i.Created * 1000,
      }),
    )
    .sort((a, b) => b.made - a.made || a.id.localeCompare(b.id));
}

/** Every mirror on the image, newest first: its repository's key and its commit (the image's id read meanwhile). */
export async function mirrorsOn(imageId: Promise<string>): Promise<{ repo: string; base: string }[]> {
  const [id, found] = await Promise.all([imageId, listMirrors()]);
  return found.filter((m) => m.from === id && OBJECT_ID.test(m.base)).map((m) => ({ repo: m.repo, base: m.base }));
}

/** Whether the image `tag` is the mirror of exactly this repository, commit and image. */
async function isMirror(tag: string, repo: MirrorRepo, base: string, imageId: string): Promise<boolean> {
  try {
    const info = (await (await docker()).getImage(tag).inspect()) as { Config?: { Labels?: Record<string, string> } };
    const l = info.Config?.Labels ?? {};
    return l[MIRROR_LABELS.repo] === repo.key && l[MIRROR_LABELS.base] === base && l[MIRROR_LABELS.from] === imageId;
  } catch (err) {
    if (statusOf(err) === 404) return false;
    throw err;
  }
}

/** Removes images, never a container's (no force): one a sandbox still runs from stays. How many went. */
async function removeImages(images: readonly MirrorImage[]): Promise<number> {
  const d = await docker();
  let n = 0;
  for (const m of images) {
    try {
      await d.getImage(m.id).remove({ noprune: false });
      n++;
    } catch {
      // In use, or gone already: the next cleanup tries again.
    }
  }
  return n;
}

/**
 * Makes the mirror of `base` for `repo` on `imageId`, unless it is there: `fill` writes the
 * bare repository into the build context, which is sent to the engine and copied into a layer
 * on the image. One process at a time per mirror on this machine (a lock; the others wait, then
 * find it). The repository's mirrors past the newest KEEP on this image, and every one on another
 * image, are removed after.
 */
export async function makeMirror(o: {
  repo: MirrorRepo;
  base: string;
  imageId: string;
  fill: (gitDir: string) => Promise<void>;
  env?: NodeJS.ProcessEnv;
  onLine?: (line: string) => void;
  onBuild?: (line: string) => void;
}): Promise<{ built: boolean; tag: string }> {
  if (!OBJECT_ID.test(o.base)) throw new Error(`not an object id: ${JSON.stringify(o.base)}`);
  const tag = mirrorTag(o.repo.key, o.imageId, o.base);
  if (await isMirror(tag, o.repo, o.base, o.imageId)) return { built: false, tag };
  const release = await sandboxLock('mirror', tag, o.env ?? process.env, BUILD_WAIT_MS);
  const dir = mkdtempSync(join(tmpdir(), 'chalk-mirror-'));
  try {
    if (await isMirror(tag, o.repo, o.base, o.imageId)) return { built: false, tag };
    o.onBuild?.(
      `making this repository's sandbox mirror at ${o.base.slice(0, 12)} (once; later sandboxes get only the ticket's commits beyond it)`,
    );
    await o.fill(join(dir, 'mirror.git'));
    writeFileSync(join(dir, 'Dockerfile'), MIRROR_DOCKERFILE);
    await buildFromContext({
      context: dir,
      src: ['Dockerfile', 'mirror.git'],
      tag,
      buildargs: { CHALK_FROM: o.imageId },
      labels: {
        [MIRROR_LABELS.repo]: o.repo.key,
        [MIRROR_LABELS.root]: o.repo.root,
        [MIRROR_LABELS.base]: o.base,
        [MIRROR_LABELS.from]: o.imageId,
        [MIRROR_LABELS.host]: hostname(),
        [MIRROR_LABELS.made]: String(Date.now()),
      },
      onLine: o.onLine,
      what: `sandbox mirror ${tag}`,
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
    release();
  }
  const mine = await listMirrors({ repo: o.repo.key });
  const keep = new Set(
    mine
      .filter((m) => m.from === o.imageId)
      .slice(0, KEEP)
      .map((m) => m.id),
  );
  await removeImages(mine.filter((m) => !keep.has(m.id) && !m.tags.includes(tag)));
  return { built: true, tag };
}

/**
 * `chalk cleanup`: the repository's mirrors but the newest on `imageId` (`all`, or no image id:
 * every one), and every mirror of a repository on this machine whose checkout is gone. How many went.
 */
export async function removeMirrors(o: { repo: MirrorRepo; all: boolean; imageId: string | null }): Promise<number> {
  try {
    const every = await listMirrors();
    const mine = every.filter((m) => m.repo === o.repo.key);
    const newest = o.all || !o.imageId ? undefined : mine.find((m) => m.from === o.imageId);
    const here = hostname();
    const gone = every.filter((m) => m.repo !== o.repo.key && m.host === here && m.root !== '' && !existsSync(m.root));
    return await removeImages([...mine.filter((m) => m.id !== newest?.id), ...gone]);
  } catch (err) {
    throw new Error(`could not list the sandbox mirrors: ${describeDockerError(err)}`);
  }
}
