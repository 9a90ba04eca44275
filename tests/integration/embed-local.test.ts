import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { untrustedReason } from '../../core/decision/trust.js';
import type { DecisionFailure } from '../../core/protocol/failure.js';
import { EmbedClient } from '../../plugins/decider-local/embed/client.js';
import { EmbedModelMissing, loadEmbedFunction } from '../../plugins/decider-local/embed/loader.js';
import { createEmbedServer, type EmbedFunction } from '../../plugins/decider-local/embed/service.js';
import { tempDir } from '../helpers/cli.js';

/**
 * The embedding service and its client over loopback: the service with an embedding function
 * the test gives (no model can be downloaded here), the client's checks against it and against
 * servers that answer wrongly, and the model loader's failure path as a real process.
 */

const servers: Server[] = [];
const clients: EmbedClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

async function listen(server: Server): Promise<string> {
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function client(url: string, untrusted?: () => string | null): EmbedClient {
  const c = new EmbedClient({ url, ...(untrusted ? { untrusted } : {}) });
  clients.push(c);
  return c;
}

/** Deterministic, not unit length (the service normalises), and counting how many run at once. */
function countingEmbed(delayMs = 0) {
  const stats = { inFlight: 0, peak: 0, batches: [] as number[] };
  const embed: EmbedFunction = async (texts) => {
    stats.inFlight++;
    stats.peak = Math.max(stats.peak, stats.inFlight);
    stats.batches.push(texts.length);
    await new Promise((r) => setTimeout(r, delayMs));
    stats.inFlight--;
    return texts.map((t) => Array.from({ length: 384 }, (_, i) => ((t.charCodeAt(i % t.length) + i) % 17) + 1));
  };
  return { embed, stats };
}

const failureOf = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (err) {
    return err as DecisionFailure;
  }
  throw new Error('expected a failure');
};

describe('the local embedding service and its client', () => {
  it('embeds a batch: one 384-d unit vector per input, in order', async () => {
    const { embed, stats } = countingEmbed();
    const c = client(await listen(createEmbedServer({ embed, revision: 'abc1234def' })));
    const v = await c.embed(['alpha', 'beta', 'alpha']);
    expect(v).toHaveLength(3);
    for (const x of v) {
      expect(x).toHaveLength(384);
      expect(Math.hypot(...x)).toBeCloseTo(1, 4);
    }
    expect(v[0]).toEqual(v[2]);
    expect(v[0]).not.toEqual(v[1]);
    expect(stats.batches).toEqual([3]);
    expect(await c.health()).toEqual({
      healthy: true,
      status: 'ok',
      via: 'health',
      model: 'BAAI/bge-small-en-v1.5@abc1234',
    });
  });

  it('encodes one request at a time', async () => {
    const { embed, stats } = countingEmbed(50);
    const c = client(await listen(createEmbedServer({ embed, revision: 'r' })));
    await Promise.all([c.embed(['a']), c.embed(['b']), c.embed(['c']), c.embed(['d'])]);
    expect(stats.batches).toHaveLength(4);
    expect(stats.peak).toBe(1);
  });

  it('a model giving other dimensions is a 500, never a wrong vector', async () => {
    const c = client(await listen(createEmbedServer({ embed: async (t) => t.map(() => [1, 2, 3]), revision: 'r' })));
    const f = await failureOf(c.embed(['a']));
    expect(f.kind).toBe('server');
  });

  it('the client refuses a server answering 512 dimensions, naming both numbers', async () => {
    const url = await listen(
      createServer((_req, res) => {
        const v = Array.from({ length: 512 }, () => 1 / Math.sqrt(512));
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ data: [{ index: 0, embedding: v }] }));
      }),
    );
    const f = await failureOf(client(url).embed(['a']));
    expect(f.kind).toBe('invalid');
    expect(f.message).toBe('embedding 0 has 512 dimensions, and Chalk needs 384 (BAAI/bge-small-en-v1.5)');
  });

  it('classifies what is not an answer: 422, 500, nothing listening, a hang', async () => {
    const { embed } = countingEmbed();
    const url = await listen(createEmbedServer({ embed, revision: 'r' }));
    const raw = await fetch(`${url}/v1/embeddings`, { method: 'POST', body: '{"input":[1]}' });
    expect(raw.status).toBe(422);
    expect(await raw.json()).toEqual({
      error: { message: 'input must be a string or 1 to 64 strings', type: 'invalid_request_error' },
    });
    const dead = await listen(createServer(() => {}));
    const hang = await failureOf(client(dead).embed(['a'], { deadline: Date.now() + 200 }));
    expect(hang.kind).toBe('timeout');
    const port = new URL(dead).port;
    servers.pop()?.close();
    const gone = await failureOf(client(`http://127.0.0.1:${port}`).embed(['a']));
    expect(gone.kind).toBe('unreachable');
  });

  it('health falls back to one embedding when /health is absent', async () => {
    let posts = 0;
    const { embed } = countingEmbed();
    const inner = createEmbedServer({ embed, revision: 'r' });
    const url = await listen(
      createServer((req, res) => {
        if (req.url === '/health') {
          res.writeHead(404).end();
          return;
        }
        posts++;
        inner.emit('request', req, res);
      }),
    );
    expect(await client(url).health()).toEqual({ healthy: true, status: 'ok', via: 'probe' });
    expect(posts).toBe(1);
  });

  it('sends an untrusted address zero bytes, health checks included', async () => {
    let bytes = 0;
    const url = await listen(
      createServer((req, res) => {
        req.on('data', (c: Buffer) => {
          bytes += c.length;
        });
        bytes += 1;
        res.end();
      }),
    );
    const remote = 'http://embed.example.com';
    const refused = () => untrustedReason(remote, 'CHALK_EMBED_URL', { XDG_STATE_HOME: tempDir() });
    const c = client(url, refused);
    expect((await failureOf(c.embed(['secret lesson text']))).kind).toBe('untrusted');
    expect((await c.health()).status).toBe('untrusted');
    expect(bytes).toBe(0);
  });
});

describe('loading the model', () => {
  it('a missing model is one line naming chalk decider up', async () => {
    const dir = tempDir();
    await expect(loadEmbedFunction({ modelDir: join(dir, 'nope'), runtimeDir: dir })).rejects.toThrow(
      EmbedModelMissing,
    );
    await expect(loadEmbedFunction({ modelDir: join(dir, 'nope'), runtimeDir: dir })).rejects.toThrow(
      /^the embedding model is not installed \(.*lacks config\.json, tokenizer\.json, tokenizer_config\.json, onnx\/model\.onnx\): run chalk decider up$/,
    );
  });

  it('a model without the runtime says so, naming chalk decider up', async () => {
    const model = join(tempDir(), 'snapshots', 'abc');
    mkdirSync(join(model, 'onnx'), { recursive: true });
    for (const f of ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model.onnx'])
      writeFileSync(join(model, f), '{}');
    await expect(loadEmbedFunction({ modelDir: model, runtimeDir: tempDir() })).rejects.toThrow(
      /^the embedding runtime \(@huggingface\/transformers\) is not installed in .*: run chalk decider up$/,
    );
  });

  it('the service process with no model exits 1 with that one line', () => {
    const main = join(import.meta.dirname, '..', '..', 'dist', 'plugins', 'decider-local', 'embed', 'service-main.js');
    const dir = tempDir();
    const r = spawnSync(
      process.execPath,
      [main, '--port', '1', '--model-dir', join(dir, 'm'), '--runtime', dir, '--revision', 'x'],
      { encoding: 'utf8', timeout: 20_000 },
    );
    expect(r.status).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^chalk-embed: the embedding model is not installed .*: run chalk decider up\n$/);
  });
});
