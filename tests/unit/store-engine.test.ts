import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UserError } from '../../core/errors.js';
import { checkDataMajor, dataMajor, EMBEDDED_MAJOR, ENGINES } from '../../core/store/embedded/engine.js';
import { embeddedPathsIn } from '../../core/store/embedded/paths.js';
import { tempDir } from '../helpers/cli.js';

const ROOT = join(import.meta.dirname, '..', '..');

describe('the embedded engine and its data directory', () => {
  it("this Chalk's engine is the PGlite package.json depends on, at the same versions", () => {
    const deps = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).dependencies as Record<string, string>;
    const own = ENGINES[EMBEDDED_MAJOR];
    expect(own).toHaveLength(1);
    for (const p of own?.[0]?.packages ?? []) expect(deps[p.name], p.name).toBe(p.version);
    for (const [major, engines] of Object.entries(ENGINES)) {
      for (const e of engines) expect(e.major).toBe(Number(major));
    }
  });

  it("reads the major from PG_VERSION, and refuses another major's directory in one line naming what to do", () => {
    const paths = embeddedPathsIn(join(tempDir(), 'db'));
    expect(dataMajor(paths.data)).toBeNull();
    expect(() => checkDataMajor(paths)).not.toThrow();
    mkdirSync(paths.data, { recursive: true });
    const at = (v: string) => {
      writeFileSync(join(paths.data, 'PG_VERSION'), v);
      try {
        checkDataMajor(paths);
        return null;
      } catch (err) {
        expect(err).toBeInstanceOf(UserError);
        return (err as Error).message;
      }
    };
    expect(at(`${EMBEDDED_MAJOR}\n`)).toBeNull();
    expect(at('17\n')).toBe(
      `the embedded database at ${paths.data} is Postgres 17 and this Chalk's is Postgres ${EMBEDDED_MAJOR}: run chalk db upgrade to move it (the old directory is kept)`,
    );
    expect(at(`${EMBEDDED_MAJOR + 1}\n`)).toBe(
      `the embedded database at ${paths.data} is Postgres ${EMBEDDED_MAJOR + 1}, newer than this Chalk's Postgres ${EMBEDDED_MAJOR}: use the newer Chalk that wrote it (chalk db upgrade only moves older data forward)`,
    );
    expect(at('not a version')).toBe(
      `${join(paths.data, 'PG_VERSION')} does not hold a Postgres version: is this a data directory?`,
    );
  });
});
