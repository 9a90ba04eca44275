import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import { EGRESS_PORTS } from './layout.js';
import type { Run, Runs } from './runs.js';
import { UsageMeter } from './usage.js';

/**
 * The model gateway: the only way a sandbox's claude reaches the model. A request is taken only
 * from the run's own network, with the run's token, while one of the run's agent calls is open,
 * and only on the paths Claude Code uses for the model (`/v1/messages`, `/v1/messages/
 * count_tokens`). Whatever credential the client sent is dropped and the run's real one is
 * added; the response is relayed as it comes and its usage counted against the call, whose cap
 * refuses the next request once it is spent. Refusals are answered in the API's own error shape,
 * with `x-should-retry: false`, so the client stops.
 */

const PATHS = new Set(['/v1/messages', '/v1/messages/count_tokens']);

/** Headers never passed on: hop-by-hop ones, and every credential the client sent. */
const DROPPED = new Set([
  'host',
  'content-length',
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'proxy-authorization',
  'proxy-authenticate',
  'x-api-key',
  'authorization',
  'cookie',
]);

const OAUTH_BETA = 'oauth-2025-04-20';

function refuse(req: IncomingMessage, res: ServerResponse, status: number, type: string, message: string): void {
  // What the client sent is read and thrown away, so the connection can be used again.
  req.resume();
  const body = JSON.stringify({ type: 'error', error: { type, message } });
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    'x-should-retry': 'false',
  });
  res.end(body);
}

function tokenOf(h: IncomingHttpHeaders): string {
  const key = h['x-api-key'];
  if (typeof key === 'string' && key !== '') return key;
  const auth = h.authorization;
  return typeof auth === 'string' && /^Bearer /i.test(auth) ? auth.slice(7).trim() : '';
}

function upstreamHeaders(h: IncomingHttpHeaders, run: Run): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined && !DROPPED.has(k)) out[k] = v;
  const c = run.settings.credential;
  if (c.apiKey) out['x-api-key'] = c.apiKey;
  if (c.authToken) out.authorization = `Bearer ${c.authToken}`;
  else if (c.oauthToken) {
    out.authorization = `Bearer ${c.oauthToken}`;
    const beta = typeof out['anthropic-beta'] === 'string' ? out['anthropic-beta'] : '';
    if (
      !beta
        .split(',')
        .map((b) => b.trim())
        .includes(OAUTH_BETA)
    ) {
      out['anthropic-beta'] = beta === '' ? OAUTH_BETA : `${beta},${OAUTH_BETA}`;
    }
  }
  return out;
}

const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade']);

export interface GatewayOptions {
  runs: Runs;
  /** The dispatcher a run's requests go out through (its endpoint, maybe through a proxy). */
  dispatcherFor(run: Run): Dispatcher;
}

/** The request handler of the gateway's HTTP server. */
export function gatewayHandler(o: GatewayOptions) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    void relay(o, req, res).catch((err: unknown) => {
      if (!res.headersSent)
        refuse(req, res, 502, 'api_error', `Chalk's model gateway failed: ${String(err).slice(0, 200)}`);
      else res.destroy();
    });
  };
}

async function relay(o: GatewayOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const source = req.socket.remoteAddress ?? '';
  const url = new URL(req.url ?? '/', 'http://gateway');
  const byToken = o.runs.byToken(tokenOf(req.headers));
  const run = byToken?.contains(source) ? byToken : undefined;
  const note = (why: string) =>
    o.runs.bySource(source)?.refused('model-gateway', EGRESS_PORTS.gateway, 'gateway', why, Date.now() / 1000);
  if (!run) {
    note(`${req.method} ${url.pathname.slice(0, 100)} without this run's token`);
    return refuse(req, res, 401, 'authentication_error', "Chalk's model gateway does not know this token here");
  }
  if (req.method !== 'POST' || !PATHS.has(url.pathname)) {
    const why = `${req.method} ${url.pathname.slice(0, 100)}: the model gateway forwards only POST /v1/messages and /v1/messages/count_tokens`;
    note(why);
    return refuse(req, res, 403, 'permission_error', `${why}. Do not retry.`);
  }
  const call = run.call;
  if (!call) {
    note('a model request while no agent call runs');
    return refuse(req, res, 403, 'permission_error', 'no agent call of this run is open; the gateway takes none now');
  }
  const metered = url.pathname === '/v1/messages';
  if (metered && call.spent) {
    call.refusedOverCap++;
    return refuse(
      req,
      res,
      403,
      'permission_error',
      `this agent call has spent its cap of $${call.capUsd.toFixed(2)} (CHALK_BUDGET_USD); stop and answer now`,
    );
  }
  const body = await readBody(req);
  if (body === null) return refuse(req, res, 413, 'request_too_large', "the request is over the gateway's 64 MiB");
  const base = new URL(run.settings.upstream);
  const upstream = await o.dispatcherFor(run).request({
    origin: base.origin,
    path: `${base.pathname.replace(/\/+$/, '')}${url.pathname}${url.search}`,
    method: 'POST',
    headers: upstreamHeaders(req.headers, run),
    body,
  });
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(upstream.headers)) if (v !== undefined && !HOP.has(k)) headers[k] = v;
  res.writeHead(upstream.statusCode, headers);
  const type = String(upstream.headers['content-type'] ?? '');
  const meter = metered && upstream.statusCode < 300 ? new UsageMeter(type.includes('text/event-stream')) : null;
  await new Promise<void>((resolve) => {
    const src = upstream.body;
    const done = () => {
      if (meter) call.add(meter.end());
      resolve();
    };
    res.on('close', () => src.destroy());
    res.on('drain', () => src.resume());
    src.on('data', (chunk: Buffer) => {
      meter?.push(chunk);
      if (!res.write(chunk)) src.pause();
    });
    src.on('end', () => {
      res.end();
      done();
    });
    src.on('error', () => {
      res.destroy();
      done();
    });
  });
}

/** The largest request the gateway takes (the API's own limit is 32 MB). */
const BODY_CAP = 64 * 1024 * 1024;

/** The whole request body (the model's requests are small), or null past the cap. */
function readBody(req: IncomingMessage): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= BODY_CAP) parts.push(c);
    });
    req.on('end', () => resolve(size > BODY_CAP ? null : Buffer.concat(parts)));
    req.on('error', reject);
  });
}
