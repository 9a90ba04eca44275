import type { CacheEntry } from './store.js';

/**
 * Which saved setup states are stale (pure). A state is saved only from a base branch's
 * tree, so the one a sandbox of the base branch would restore now (`current`: the key of
 * the base branch's tree, this image, command and directories) is the one to keep; when
 * that cannot be known (no engine to ask for the image), the most recently used.
 */
export function staleKeys(entries: readonly CacheEntry[], current: string | null): string[] {
  if (current !== null) return entries.filter((e) => e.key !== current).map((e) => e.key);
  return overflowKeys(entries, 1);
}

/** Every entry but the `keep` most recently used (after a save: the repository's older states go). */
export function overflowKeys(entries: readonly CacheEntry[], keep: number): string[] {
  return [...entries]
    .sort((a, b) => (a.usedAt < b.usedAt ? 1 : a.usedAt > b.usedAt ? -1 : a.key < b.key ? -1 : 1))
    .slice(keep)
    .map((e) => e.key);
}
