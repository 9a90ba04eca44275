import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { UserError } from '../../errors.js';
import { stateDir } from '../../layout.js';
import { ensureNpmPrefix, type NpmPackage } from '../../process/npm-prefix.js';
import type { EmbeddedPaths } from './paths.js';

/**
 * A PGlite release, by the Postgres major its data directories are. A data directory is tied to
 * its major: a PGlite of another major cannot open it (0.5 on a 0.3 directory fails with
 * "PGlite failed to initialize properly"). `chalk db upgrade` installs the engines of a
 * directory's major on demand and moves the rows to this Chalk's.
 */
export interface Engine {
  major: number;
  /** What to install, exact versions; the first is PGlite itself. */
  packages: readonly NpmPackage[];
  /** The modules that export PGlite, `vector` and `pg_trgm`. */
  modules: { pglite: string; vector: string; trgm: string };
}

const PGLITE = '@electric-sql/pglite';
const TRGM = '@electric-sql/pglite/contrib/pg_trgm';
const pglite17 = (version: string): Engine => ({
  major: 17,
  packages: [{ name: PGLITE, version }],
  modules: { pglite: PGLITE, vector: `${PGLITE}/vector`, trgm: TRGM },
});

/**
 * The releases of every major a Chalk can read, oldest first. Within a major, releases need not
 * read each other's directories (PGlite 0.4 sees no table in a directory 0.3 wrote, nor 0.3 in
 * one of 0.4's, though both are Postgres 17.5), and PG_VERSION names only the major, so an
 * upgrade tries each release on a copy until one sees the tables. 18 is this Chalk's own
 * (package.json; tests/unit/store-engine.test.ts checks they agree), listed so that the next
 * Chalk can move it on.
 */
export const ENGINES: Readonly<Record<number, readonly Engine[]>> = {
  17: [pglite17('0.3.16'), pglite17('0.4.6')],
  18: [
    {
      major: 18,
      packages: [
        { name: PGLITE, version: '0.5.14' },
        { name: '@electric-sql/pglite-pgvector', version: '0.0.15' },
      ],
      modules: { pglite: PGLITE, vector: '@electric-sql/pglite-pgvector', trgm: TRGM },
    },
  ],
};

/** The Postgres major of the PGlite this Chalk runs (its dependency in package.json). */
export const EMBEDDED_MAJOR = 18;

/** The major a data directory was made by (its PG_VERSION file); null when there is none yet. */
export function dataMajor(dataDir: string): number | null {
  let text: string;
  try {
    text = readFileSync(join(dataDir, 'PG_VERSION'), 'utf8');
  } catch {
    return null;
  }
  const m = /^(\d+)\s*$/.exec(text);
  if (!m)
    throw new UserError(`${join(dataDir, 'PG_VERSION')} does not hold a Postgres version: is this a data directory?`);
  return Number(m[1]);
}

/** Refuses, in one line, a data directory this Chalk's PGlite cannot open. */
export function checkDataMajor(paths: EmbeddedPaths): void {
  const major = dataMajor(paths.data);
  if (major === null || major === EMBEDDED_MAJOR) return;
  if (major > EMBEDDED_MAJOR) {
    throw new UserError(
      `the embedded database at ${paths.data} is Postgres ${major}, newer than this Chalk's Postgres ${EMBEDDED_MAJOR}: use the newer Chalk that wrote it (chalk db upgrade only moves older data forward)`,
    );
  }
  throw new UserError(
    `the embedded database at ${paths.data} is Postgres ${major} and this Chalk's is Postgres ${EMBEDDED_MAJOR}: run chalk db upgrade to move it (the old directory is kept)`,
  );
}

/** Where an engine is installed: `<state>/db-engines/pglite-<version>/`, an npm prefix. */
export function enginePrefix(engine: Engine, env: NodeJS.ProcessEnv = process.env): string {
  return join(enginesDir(env), `pglite-${engine.packages[0]?.version}`);
}

/** Every engine an upgrade installed. */
export function enginesDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(stateDir(env), 'db-engines');
}

/** One database as every PGlite release answers it. */
export interface EngineDb {
  query<T = Record<string, unknown>>(
    sql: string,
    params?: unknown[],
    opts?: { blob?: Blob },
  ): Promise<{ rows: T[]; blob?: Blob }>;
  exec(sql: string): Promise<unknown>;
  close(): Promise<void>;
}

/** Opens a data directory, with pgvector and pg_trgm. */
export type OpenEngine = (dataDir: string) => Promise<EngineDb>;

interface PgliteModule {
  PGlite: { create(opts: { dataDir: string; extensions: Record<string, unknown> }): Promise<EngineDb> };
}

/** Installs an engine into its prefix unless it is there, and loads it. */
export async function installedEngine(
  engine: Engine,
  env: NodeJS.ProcessEnv,
  say: (line: string) => void,
): Promise<OpenEngine> {
  const prefix = enginePrefix(engine, env);
  const what = `PGlite ${engine.packages[0]?.version} (Postgres ${engine.major})`;
  await ensureNpmPrefix(prefix, engine.packages, what, env, (specs) =>
    say(`installing ${what}: ${specs} into ${prefix}`),
  );
  return loadEngine(prefix, engine.modules);
}

/** PGlite with pgvector and pg_trgm from the npm prefix `prefix`. */
export function loadEngine(prefix: string, modules: Engine['modules']): OpenEngine {
  const load = createRequire(join(prefix, 'package.json'));
  const { PGlite } = load(modules.pglite) as PgliteModule;
  const { vector } = load(modules.vector) as { vector: unknown };
  const { pg_trgm } = load(modules.trgm) as { pg_trgm: unknown };
  return (dataDir) => PGlite.create({ dataDir, extensions: { vector, pg_trgm } });
}
