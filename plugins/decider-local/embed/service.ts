import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { EMBED_DIMENSIONS, EMBED_MODEL, EMBED_PATH, MAX_INPUTS, normalise, vectorProblem } from './wire.js';

/** Turns texts into vectors (a model, or a function a test gives). */
export type EmbedFunction = (texts: string[]) => Promise<number[][]>;

export interface EmbedServiceOptions {
  embed: EmbedFunction;
  /** The model's revision (its snapshot's commit), named by /health. */
  revision: string;
  device?: string;
  /** Called on every request (the idle watcher's clock). */
  onRequest?: () => void;
}

/** The largest request body read (64 inputs of lesson text fit many times over). */
const MAX_BODY_BYTES = 1024 * 1024;

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const refuse = (res: ServerResponse, status: number, message: string) =>
  send(res, status, { error: { message, type: 'invalid_request_error' } });

function readBody(req: IncomingMessage): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        resolve(null);
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** What a request asks to embed, or why it is refused (status and message). */
export function readEmbedRequest(body: string): { texts: string[] } | { status: number; message: string } {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { status: 400, message: 'the body is not JSON' };
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    return { status: 400, message: 'the body must be a JSON object' };
  }
  const { input, model } = json as { input?: unknown; model?: unknown };
  if (model !== undefined && model !== EMBED_MODEL) {
    return { status: 422, message: `this service has only ${EMBED_MODEL}` };
  }
  const texts = typeof input === 'string' ? [input] : input;
  if (
    !Array.isArray(texts) ||
    texts.length < 1 ||
    texts.length > MAX_INPUTS ||
    !texts.every((t) => typeof t === 'string')
  ) {
    return { status: 422, message: `input must be a string or 1 to ${MAX_INPUTS} strings` };
  }
  return { texts: texts as string[] };
}

/**
 * The local embedding service: OpenAI-compatible `POST /v1/embeddings` and `GET /health`,
 * for one model. Encodes take turns (one model, one at a time: concurrent encodes on one
 * GPU are what broke the original's service), every vector is checked (384 dimensions)
 * and sent at unit length, to 6 places.
 */
export function createEmbedServer(opts: EmbedServiceOptions): Server {
  let queue: Promise<unknown> = Promise.resolve();
  const inTurn = <T>(fn: () => Promise<T>): Promise<T> => {
    const next = queue.then(fn, fn);
    queue = next.catch(() => undefined);
    return next;
  };
  return createServer(async (req, res) => {
    opts.onRequest?.();
    try {
      if (req.url === '/health' && req.method === 'GET') {
        send(res, 200, {
          status: 'ok',
          model: EMBED_MODEL,
          revision: opts.revision,
          dimensions: EMBED_DIMENSIONS,
          device: opts.device ?? 'cpu',
        });
        return;
      }
      if (req.url !== EMBED_PATH) return refuse(res, 404, `no such path: ${EMBED_PATH} and /health are served`);
      if (req.method !== 'POST') return refuse(res, 405, `${EMBED_PATH} takes POST`);
      const body = await readBody(req);
      if (body === null) return refuse(res, 413, `the body is over ${MAX_BODY_BYTES} bytes`);
      const asked = readEmbedRequest(body);
      if ('status' in asked) return refuse(res, asked.status, asked.message);
      const vectors = await inTurn(() => opts.embed(asked.texts));
      if (vectors.length !== asked.texts.length)
        throw new Error(`the model gave ${vectors.length} vectors for ${asked.texts.length} inputs`);
      const data = vectors.map((v, index) => {
        const unit = normalise(v);
        const problem = vectorProblem(unit, index);
        if (problem) throw new Error(problem);
        return { object: 'embedding', index, embedding: unit };
      });
      send(res, 200, { object: 'list', model: EMBED_MODEL, data, usage: { prompt_tokens: 0, total_tokens: 0 } });
    } catch (err) {
      send(res, 500, { error: { message: (err as Error).message, type: 'server_error' } });
    }
  });
}
