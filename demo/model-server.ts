import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import { run } from '../core/process/run.js';
import {
  checkRequest,
  firstUserText,
  lastToolResults,
  type MessagesRequest,
  type ToolResult,
} from './model-protocol.js';
import type { Block, Script, Step, Usage } from './model-script.js';

/**
 * A scripted model behind the Anthropic Messages API, for driving the real
 * `claude` CLI without a real model. Each CLI session (its
 * x-claude-code-session-id header) takes the next queued script and gets one
 * scripted assistant message per request. Requests are checked against the
 * protocol (see model-protocol.ts); a bad one is refused and recorded.
 *
 * It listens on loopback and, when the machine has one, on the docker0 bridge
 * address with the same port, so a container reaches it as
 * http://host.docker.internal:<port> (mapped to the host gateway). Never wider.
 */

export interface RecordedRequest {
  method: string;
  path: string;
  session: string;
  /** The credential the request carried (`x-api-key`, else `authorization`), to check what a gateway sent. */
  credential: string;
  body?: MessagesRequest;
  /** Index of the scripted step answered, or -1 (side request, exhausted script, refusal). */
  step: number;
}

export interface ModelServerOptions {
  scripts?: Script[];
  /** Chooses a script for a new session from its first request (before the queue is used). */
  pick?: (req: MessagesRequest) => Script | undefined;
  /** Also listen on the docker0 bridge address (default true when it exists). */
  bridge?: boolean;
}

export interface ModelServer {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  /** http://host.docker.internal:<port>, for a container on this host. */
  readonly containerUrl: string;
  readonly port: number;
  /** The bridge address also listened on, if any. */
  readonly bridgeAddress: string | undefined;
  readonly requests: RecordedRequest[];
  /** Protocol violations seen (the request was refused with a 400). */
  readonly violations: string[];
  /** Tool results the CLI sent back, in order (what the scripted tools produced). */
  readonly toolResults: ToolResult[];
  /** Sessions that asked for more after their script ran out. */
  readonly exhausted: string[];
  enqueue(...scripts: Script[]): void;
  close(): Promise<void>;
}

interface Session {
  script: Script;
  next: number;
}

const DEFAULT_USAGE: Usage = { input_tokens: 100, output_tokens: 20 };

const IPV4 = /^\d+\.\d+\.\d+\.\d+$/;

/**
 * The default bridge's gateway, which host-gateway names. Node lists only
 * running interfaces, and docker0 is down while no container is attached, so
 * ask the engine (its gateway, else the subnet's first address, which is
 * where the engine puts it) and then the kernel.
 */
async function bridgeIPv4(): Promise<string | undefined> {
  const r = await run(
    'docker',
    ['network', 'inspect', 'bridge', '--format', '{{range .IPAM.Config}}{{.Gateway}},{{.Subnet}} {{end}}'],
    { timeoutMs: 10_000 },
  );
  for (const pair of r.code === 0 ? r.stdout.trim().split(/\s+/) : []) {
    const [gateway = '', subnet = ''] = pair.split(',');
    if (IPV4.test(gateway)) return gateway;
    const net = subnet.split('/')[0] ?? '';
    if (IPV4.test(net)) return net.replace(/\.\d+$/, '.1');
  }
  const ip = await run('ip', ['-4', '-o', 'addr', 'show', 'docker0']);
  const fromIp = /inet (\d+\.\d+\.\d+\.\d+)/.exec(ip.stdout)?.[1];
  return fromIp ?? networkInterfaces().docker0?.find((a) => a.family === 'IPv4')?.address;
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let s = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => {
      s += c;
    });
    req.on('end', () => resolve(s));
    req.on('error', reject);
  });
}

const credentialOf = (req: IncomingMessage) => String(req.headers['x-api-key'] ?? req.headers.authorization ?? '');

function json(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

function apiError(res: ServerResponse, status: number, type: string, message: string): void {
  json(res, status, { type: 'error', error: { type, message } });
}

/** The assistant message for a step, with fresh tool_use ids. */
function messageOf(model: string, blocks: Block[], usage: Usage) {
  const content = blocks.map((b) =>
    b.type === 'text'
      ? b
      : { type: 'tool_use', id: `toolu_${randomUUID().replace(/-/g, '')}`, name: b.name, input: b.input },
  );
  return {
    id: `msg_${randomUUID().replace(/-/g, '')}`,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: { cache_read_input_tokens: 0, cache_creation_input_tokens: 0, ...usage },
  };
}

function streamMessage(res: ServerResponse, msg: ReturnType<typeof messageOf>): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const ev = (type: string, data: Record<string, unknown>) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  ev('message_start', {
    message: { ...msg, content: [], stop_reason: null, usage: { ...msg.usage, output_tokens: 1 } },
  });
  msg.content.forEach((b, index) => {
    if (b.type === 'text') {
      ev('content_block_start', { index, content_block: { type: 'text', text: '' } });
      ev('content_block_delta', { index, delta: { type: 'text_delta', text: (b as { text: string }).text } });
    } else {
      const tu = b as { id: string; name: string; input: unknown };
      ev('content_block_start', { index, content_block: { type: 'tool_use', id: tu.id, name: tu.name, input: {} } });
      // Split the JSON in two deltas, as a real model streams it in pieces.
      const whole = JSON.stringify(tu.input);
      const cut = Math.floor(whole.length / 2);
      ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: whole.slice(0, cut) } });
      ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: whole.slice(cut) } });
    }
    ev('content_block_stop', { index });
  });
  ev('message_delta', {
    delta: { stop_reason: msg.stop_reason, stop_sequence: null },
    usage: { output_tokens: msg.usage.output_tokens },
  });
  ev('message_stop', {});
  res.end();
}

export async function startModelServer(opts: ModelServerOptions = {}): Promise<ModelServer> {
  const queue: Script[] = [...(opts.scripts ?? [])];
  const sessions = new Map<string, Session>();
  const requests: RecordedRequest[] = [];
  const violations: string[] = [];
  const toolResults: ToolResult[] = [];
  const exhausted: string[] = [];

  async function messages(req: IncomingMessage, res: ServerResponse, path: string, raw: string): Promise<void> {
    const session = String(req.headers['x-claude-code-session-id'] ?? 'anonymous');
    const rec: RecordedRequest = { method: req.method ?? '', path, session, credential: credentialOf(req), step: -1 };
    requests.push(rec);
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      violations.push(`${path}: body is not JSON`);
      return apiError(res, 400, 'invalid_request_error', 'body is not JSON');
    }
    const { problems, request } = checkRequest(req.headers, body);
    if (!request || problems.length) {
      violations.push(...problems.map((p) => `${path}: ${p}`));
      return apiError(res, 400, 'invalid_request_error', problems.join('; '));
    }
    rec.body = request;
    toolResults.push(...lastToolResults(request));

    // Side requests without tools (titles, summaries) get a short text and use no step.
    let step: Step | undefined;
    if (request.tools?.length) {
      let s = sessions.get(session);
      if (!s) {
        const script = opts.pick?.(request) ?? queue.shift() ?? [];
        s = { script, next: 0 };
        sessions.set(session, s);
      }
      step = s.script[s.next];
      if (step) rec.step = s.next++;
      else exhausted.push(session);
    }
    if (step?.sleepMs) {
      const gone = new AbortController();
      res.on('close', () => gone.abort());
      try {
        await delay(step.sleepMs, undefined, { signal: gone.signal });
      } catch {
        return;
      }
    }
    if (step?.raw) {
      res.writeHead(step.raw.status, { 'content-type': step.raw.contentType ?? 'application/json' });
      res.end(step.raw.body);
      return;
    }
    const blocks = step?.blocks ?? [{ type: 'text', text: 'nothing more to do' }];
    const msg = messageOf(request.model, blocks, step?.usage ?? DEFAULT_USAGE);
    if (request.stream) streamMessage(res, msg);
    else json(res, 200, msg);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://fake').pathname;
    const raw = await readBody(req);
    if (req.method === 'POST' && path === '/v1/messages') return messages(req, res, path, raw);
    requests.push({ method: req.method ?? '', path, session: '', credential: credentialOf(req), step: -1 });
    if (req.method === 'POST' && path === '/v1/messages/count_tokens') {
      try {
        const b = JSON.parse(raw) as { model?: unknown; messages?: unknown };
        if (typeof b.model === 'string' && Array.isArray(b.messages)) return json(res, 200, { input_tokens: 100 });
      } catch {}
      violations.push(`${path}: needs model and messages`);
      return apiError(res, 400, 'invalid_request_error', 'count_tokens needs model and messages');
    }
    // The CLI's connectivity check.
    if (path === '/api/hello') {
      res.writeHead(200);
      res.end();
      return;
    }
    apiError(res, 404, 'not_found_error', `no route ${req.method} ${path}`);
  }

  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch((err: unknown) => {
      violations.push(`server error: ${String(err)}`);
      if (!res.headersSent) apiError(res, 500, 'api_error', 'fake model server failed');
      else res.end();
    });
  };

  const servers: Server[] = [createServer(onRequest)];
  const port = await listen(servers[0] as Server, 0, '127.0.0.1');
  const bridge = opts.bridge === false ? undefined : await bridgeIPv4();
  if (bridge) {
    const s = createServer(onRequest);
    await listen(s, port, bridge);
    servers.push(s);
  }

  return {
    url: `http://127.0.0.1:${port}`,
    containerUrl: `http://host.docker.internal:${port}`,
    port,
    bridgeAddress: bridge,
    requests,
    violations,
    toolResults,
    exhausted,
    enqueue: (...scripts) => {
      queue.push(...scripts);
    },
    close: async () => {
      await Promise.all(
        servers.map(
          (s) =>
            new Promise<void>((resolve) => {
              s.close(() => resolve());
              s.closeAllConnections();
            }),
        ),
      );
    },
  };
}

/** The text of the prompt a session started with (handy for `pick`). */
export { firstUserText };
