import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';

/**
 * A fake decider speaking decider protocol v1, for tests. It checks every
 * request against the protocol, written out here on its own (not imported from
 * core/decision), so a client that drifts from the protocol fails the tests:
 * a request that breaks it is answered 422 and listed in `violations`. Valid
 * requests are answered from a script.
 */

const text = z.string().refine((s) => s.trim() !== '', 'must not be blank');
const WireQuestion = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('noul'),
    instructions: text,
    criteria: z.object({ true: z.string(), false: z.string() }).strict().optional(),
  }),
  z.object({
    type: z.literal('choice'),
    instructions: text,
    criteria: z.record(text, z.string()).refine((o) => Object.keys(o).length >= 2, 'needs at least 2 options'),
  }),
  z.object({ type: z.literal('score'), instructions: text, criteria: z.array(text).min(2).max(10) }),
]);
export const WireRequest = z.object({
  protocol: z.literal(1),
  state: z.string().refine((s) => s.trim() !== '', 'the state is empty'),
  questions: z.record(text, WireQuestion).refine((q) => Object.keys(q).length >= 1, 'no questions'),
});
export type WireRequest = z.infer<typeof WireRequest>;

export interface Reply {
  status?: number;
  /** A JSON body (default: `{model, answers}` built by `answers`). */
  body?: unknown;
  /** A raw body, sent as is. */
  raw?: string;
  headers?: Record<string, string>;
  /** Service time before answering. */
  delayMs?: number;
  /** Drop the connection without an answer. */
  hangUp?: boolean;
  /** Never answer (the client's deadline must end the call). */
  silent?: boolean;
}

export type Script = (request: WireRequest, n: number) => Reply | Promise<Reply>;

export interface FakeOptions {
  script?: Script;
  /** When set, every request must carry `Authorization: Bearer <token>` (else 401). */
  token?: string;
  /** `/health`: a reply, or 404 when absent. */
  health?: Reply;
  model?: string;
}

/** Answers every question asked: noul at `p`, the first option of a choice, the middle of a score. */
export function answerAll(req: WireRequest, p = 0.9, model = 'fake-decider-v1'): { model: string; answers: object } {
  const answers: Record<string, unknown> = {};
  for (const [id, q] of Object.entries(req.questions)) {
    if (q.type === 'noul') answers[id] = { type: 'noul', noul: p };
    else if (q.type === 'choice') answers[id] = { type: 'choice', choice: Object.keys(q.criteria)[0], confidence: p };
    else answers[id] = { type: 'score', score: (q.criteria.length - 1) / 2, confidence: p };
  }
  return { model, answers };
}

/**
 * The ways the fake can misbehave, each a script: answer slowly, out of order
 * (answer keys reversed, plus one for a question not asked), with 401, 422 or
 * 500, with unreadable JSON, with the question's key missing, with another
 * protocol version, or never (the client's deadline must end the call).
 */
export const MISBEHAVIOURS = [
  'slow',
  'out_of_order',
  'status_401',
  'status_422',
  'status_500',
  'unreadable',
  'missing_key',
  'other_version',
  'silent',
] as const;
export type Misbehaviour = (typeof MISBEHAVIOURS)[number];

export function misbehave(kind: Misbehaviour, o: { p?: number; model?: string; delayMs?: number } = {}): Script {
  const body = (r: WireRequest) => answerAll(r, o.p ?? 0.97, o.model);
  switch (kind) {
    case 'slow':
      return (r) => ({ body: body(r), delayMs: o.delayMs ?? 3_000 });
    case 'out_of_order':
      return (r) => {
        const { model, answers } = body(r) as { model: string; answers: Record<string, unknown> };
        const reversed: Record<string, unknown> = { not_asked: { type: 'noul', noul: 0.5 } };
        for (const k of Object.keys(answers).reverse()) reversed[k] = answers[k];
        return { body: { model, answers: reversed } };
      };
    case 'status_401':
      return () => ({ status: 401, body: { detail: 'unauthorized' } });
    case 'status_422':
      return () => ({ status: 422, body: { detail: [{ msg: 'field required' }] } });
    case 'status_500':
      return () => ({ status: 500, body: { detail: 'internal error' } });
    case 'unreadable':
      return () => ({ raw: '{"model": "fake", "answers": {' });
    case 'missing_key':
      return () => ({ body: { model: o.model ?? 'fake-decider-v1', answers: {} } });
    case 'other_version':
      return (r) => ({ body: { protocol: 2, ...body(r) } });
    case 'silent':
      return () => ({ silent: true });
  }
}

export class FakeDecider {
  readonly requests: WireRequest[] = [];
  readonly violations: string[] = [];
  readonly authHeaders: Array<string | undefined> = [];
  /** Arrival times (performance.now()) of valid decision requests. */
  readonly arrivals: number[] = [];
  healthCalls = 0;
  /** TCP connections accepted (an address that must be sent nothing gets none). */
  connections = 0;
  /** Every request's raw head and body, as received (to look for what must never be sent). */
  readonly raw: string[] = [];
  served = 0;
  inFlight = 0;
  peak = 0;
  script: Script;
  private server: Server | null = null;
  private readonly sockets = new Set<import('node:net').Socket>();
  url = '';

  constructor(readonly opts: FakeOptions = {}) {
    this.script = opts.script ?? ((r) => ({ body: answerAll(r, 0.9, opts.model) }));
  }

  /** Listens on 127.0.0.1, or on `host` (a non-loopback address stands for a decider on another machine). */
  async start(port = 0, host = '127.0.0.1'): Promise<this> {
    this.server = createServer((req, res) => {
      void this.handle(req, res);
    });
    this.server.on('connection', (s) => {
      this.connections += 1;
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve) => this.server?.listen(port, host, resolve));
    this.url = `http://${host}:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  get port(): number {
    return Number(new URL(this.url).port);
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = null;
  }

  private send(res: ServerResponse, reply: Reply): void {
    if (reply.hangUp) {
      res.socket?.destroy();
      return;
    }
    const body = reply.raw ?? JSON.stringify(reply.body ?? {});
    res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...(reply.headers ?? {}) });
    res.end(body);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    this.raw.push(`${req.method} ${req.url}\n${JSON.stringify(req.headers)}\n${raw}`);
    if (req.method === 'GET' && req.url === '/health') {
      this.healthCalls += 1;
      if (raw !== '') this.violations.push('a health check carried a body');
      this.send(res, this.opts.health ?? { status: 404, body: { detail: 'Not Found' } });
      return;
    }
    if (req.method !== 'POST' || req.url !== '/v1/systemone') {
      this.violations.push(`${req.method} ${req.url} is not an endpoint of the protocol`);
      this.send(res, { status: 404, body: { detail: 'Not Found' } });
      return;
    }
    this.authHeaders.push(req.headers.authorization);
    if (this.opts.token !== undefined && req.headers.authorization !== `Bearer ${this.opts.token}`) {
      this.send(res, { status: 401, body: { detail: 'unauthorized' } });
      return;
    }
    if (!/^application\/json/.test(req.headers['content-type'] ?? '')) {
      this.violations.push(`content-type ${req.headers['content-type']}`);
    }
    let parsed: WireRequest;
    try {
      const checked = WireRequest.safeParse(JSON.parse(raw));
      if (!checked.success) {
        const i = checked.error.issues[0];
        this.violations.push(`${i?.path.join('.')}: ${i?.message}`);
        this.send(res, { status: 422, body: { detail: checked.error.issues } });
        return;
      }
      parsed = checked.data;
    } catch {
      this.violations.push('the body is not JSON');
      this.send(res, { status: 422, body: { detail: 'not JSON' } });
      return;
    }
    this.requests.push(parsed);
    this.arrivals.push(performance.now());
    const n = this.requests.length;
    this.inFlight += 1;
    this.peak = Math.max(this.peak, this.inFlight);
    try {
      const reply = await this.script(parsed, n);
      if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
      if (reply.silent) return;
      this.served += 1;
      this.send(res, reply);
    } finally {
      this.inFlight -= 1;
    }
  }
}
