import type pg from 'pg';
import { UserError } from '../../errors.js';
import { dataMajor } from '../embedded/engine.js';
import type { EmbeddedPaths } from '../embedded/paths.js';
import { PgStore } from '../pg-store.js';
import { describeUrl } from '../target.js';
import { copyRows, originOf, type TableCopied } from './copy.js';
import { openCopyTarget } from './target.js';

export type CopyOutcome = { copied: false; why: string } | { copied: true; where: string; tables: TableCopied[] };

/**
 * `chalk db copy`: this machine's embedded database into the server `url` names (checked and
 * brought to this Chalk's schema first, so a bad URL fails before the embedded server starts).
 */
export async function copyEmbeddedTo(opts: {
  paths: EmbeddedPaths;
  url: string;
  /** Where the URL came from (`--to`, `--to-env NAME`, CHALK_DATABASE_URL), for error lines. */
  setting: string;
  timeoutMs: number;
  embeddedTimeoutMs: number;
  progress: (line: string) => void;
}): Promise<CopyOutcome> {
  if (dataMajor(opts.paths.data) === null) {
    return {
      copied: false,
      why: `there is no embedded database on this machine (${opts.paths.data}): nothing to copy`,
    };
  }
  const where = describeUrl(opts.url);
  const target = await openCopyTarget(opts.url, opts.timeoutMs, opts.setting);
  let source: PgStore | null = null;
  try {
    source = await PgStore.open({ kind: 'embedded', paths: opts.paths }, opts.embeddedTimeoutMs);
    const pool: pg.Pool = source.pool;
    if ((await originOf(pool)) === (await originOf(target))) {
      throw new UserError(`${opts.setting} names this machine's own embedded database: give the server to copy it to`);
    }
    return { copied: true, where, tables: await copyRows(pool, target, opts.progress) };
  } finally {
    await source?.close();
    await target.end();
  }
}
