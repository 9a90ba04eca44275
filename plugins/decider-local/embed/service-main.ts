/**
 * The local embedding service's process: `node service-main.js --port N --model-dir DIR
 * --runtime DIR --revision REV [--pidfile FILE] [--last-used FILE]`, started detached by
 * `chalk decider up` (or a run) on 127.0.0.1. A model it cannot load is one line on stderr
 * and exit 1.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { touch } from '../client.js';
import { EmbedModelMissing, loadEmbedFunction } from './loader.js';
import { createEmbedServer } from './service.js';
import { EMBED_MODEL } from './wire.js';

const { values } = parseArgs({
  options: {
    port: { type: 'string' },
    'model-dir': { type: 'string' },
    runtime: { type: 'string' },
    revision: { type: 'string', default: 'unknown' },
    pidfile: { type: 'string' },
    'last-used': { type: 'string' },
  },
});

async function main(): Promise<void> {
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new EmbedModelMissing('--port must be a port number');
  if (!values['model-dir'] || !values.runtime)
    throw new EmbedModelMissing('--model-dir and --runtime are needed: run chalk decider up');
  const embed = await loadEmbedFunction({ modelDir: values['model-dir'], runtimeDir: values.runtime });
  const lastUsed = values['last-used'];
  const server = createEmbedServer({
    embed,
    revision: values.revision ?? 'unknown',
    ...(lastUsed ? { onRequest: () => touch(lastUsed) } : {}),
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  if (values.pidfile) writeFileSync(values.pidfile, `${process.pid}\n`, { mode: 0o600 });
  process.stderr.write(`chalk-embed: ${EMBED_MODEL}@${values.revision} on cpu, http://127.0.0.1:${port}\n`);
  const stop = () => server.close(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`chalk-embed: ${err instanceof EmbedModelMissing ? err.message : (err as Error).message}\n`);
  process.exit(1);
});
