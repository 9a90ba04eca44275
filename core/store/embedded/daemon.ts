/**
 * The embedded database server process: `node daemon.js <db dir>`. Started detached by
 * `ensureEmbedded` (never by hand); holds `server.pid` while it runs; SIGTERM or SIGINT
 * close it cleanly. Its output goes to `server.log`.
 */
import { closeSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { alive, readPid } from '../../process/pid.js';
import { embeddedPathsIn } from './paths.js';
import { EmbeddedServer } from './server.js';

const say = (line: string) => process.stdout.write(`${new Date().toISOString()} ${line}\n`);

/** Takes `server.pid` (clearing one left by a dead process); false when a live server holds it. */
function claimPid(file: string): boolean {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(file, 'wx', 0o600);
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = readPid(file);
      if (pid !== null && pid !== process.pid && alive(pid)) return false;
      rmSync(file, { force: true });
    }
  }
  return false;
}

async function main(dir: string): Promise<void> {
  const paths = embeddedPathsIn(dir);
  mkdirSync(paths.data, { recursive: true, mode: 0o700 });
  if (!claimPid(paths.pidFile)) {
    say(`another server (pid ${readPid(paths.pidFile)}) holds ${paths.pidFile}; exiting`);
    process.exit(3);
  }
  say(`started pid ${process.pid}`);
  const releasePid = () => {
    if (readPid(paths.pidFile) === process.pid) rmSync(paths.pidFile, { force: true });
  };
  let server: EmbeddedServer;
  try {
    server = await EmbeddedServer.open(paths);
    await server.listen();
  } catch (err) {
    say(`failed: ${err instanceof Error ? err.message : String(err)}`);
    releasePid();
    process.exit(1);
  }
  say(`listening on ${paths.socket}`);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    say(`${signal}: shutting down`);
    try {
      await server.stop();
      say('stopped cleanly');
    } catch (err) {
      say(`shutdown error: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      releasePid();
      process.exit(0);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGHUP', () => {});
}

const dir = process.argv[2];
if (!dir) {
  process.stderr.write('usage: daemon.js <db dir>\n');
  process.exit(2);
}
main(dir).catch((err) => {
  say(`fatal: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exit(1);
});
