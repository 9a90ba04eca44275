// What an older Chalk's embedded server is to `chalk db upgrade`: a process holding server.pid
// with the data directory open in its own PGlite. Run by the upgrade test as
// `node old-server.mjs <npm prefix with that PGlite> <db dir>`; prints `ready` once the data is
// open, and on SIGTERM closes it and gives the pid file back, as the real server does.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadEngine } from '../../../dist/core/store/embedded/engine.js';

const [prefix, dir] = process.argv.slice(2);
const pidFile = join(dir, 'server.pid');
writeFileSync(pidFile, `${process.pid}\n`);
const open = loadEngine(prefix, {
  pglite: '@electric-sql/pglite',
  vector: '@electric-sql/pglite/vector',
  trgm: '@electric-sql/pglite/contrib/pg_trgm',
});
const db = await open(join(dir, 'data'));
process.stdout.write('ready\n');
process.on('SIGTERM', async () => {
  await db.close();
  rmSync(pidFile, { force: true });
  process.exit(0);
});
setInterval(() => {}, 60_000);
