import type { Socket } from 'node:net';
import { EGRESS_MODES } from './policy.js';
import type { Run, RunSettings, Runs } from './runs.js';
import { CallMeter } from './runs.js';

/**
 * The host's control connection: JSON lines, one answer per request, in order. A connection
 * opens one run (`open`), brackets each agent call (`call` with its cap, `end` with what the
 * gateway counted) and reads the run's refusals; when the connection closes the run is gone,
 * its token with it. The host reaches this socket only through the engine (`docker exec`), so a
 * remote engine needs nothing more.
 */

export const CTL_LINE_CAP = 64 * 1024;

export type CtlRequest =
  | { op: 'ping' }
  | { op: 'open'; run: RunSettings }
  | { op: 'call'; capUsd: number }
  | { op: 'end' }
  | { op: 'refusals' }
  /** Ends the run now (its token refused from this answer on); the connection may then close. */
  | { op: 'close' };

export interface CtlHooks {
  runs: Runs;
  ready(): boolean;
  /** Resolves once Squid answers (at once when it does), false when it never did. */
  whenReady(): Promise<boolean>;
  /** Called once a run is opened and once it is gone (its dispatcher made and closed). */
  opened(run: Run): void;
  closed(run: Run): void;
}

const str = (v: unknown) => typeof v === 'string';

function settingsOf(v: unknown): RunSettings {
  const r = (v ?? {}) as Record<string, unknown>;
  const c = (r.credential ?? {}) as Record<string, unknown>;
  const p = r.proxy as Record<string, unknown> | undefined;
  if (!str(r.subnet) || !str(r.allow) || !str(r.token) || !str(r.upstream))
    throw new Error('open needs subnet, allow, token and upstream');
  if (!(EGRESS_MODES as readonly unknown[]).includes(r.mode)) throw new Error('open needs a mode');
  if ((r.token as string).length < 32) throw new Error('the token is too short');
  const cred: RunSettings['credential'] = {};
  for (const k of ['apiKey', 'authToken', 'oauthToken'] as const)
    if (str(c[k]) && c[k] !== '') cred[k] = c[k] as string;
  const proxy: NonNullable<RunSettings['proxy']> = {};
  for (const k of ['http', 'https', 'noProxy'] as const) if (p && str(p[k])) proxy[k] = p[k] as string;
  new URL(r.upstream as string);
  return {
    subnet: r.subnet as string,
    mode: r.mode as RunSettings['mode'],
    allow: r.allow as string,
    token: r.token as string,
    credential: cred,
    upstream: r.upstream as string,
    proxy,
  };
}

export function serveCtl(socket: Socket, hooks: CtlHooks): void {
  let run: Run | undefined;
  let buffered = '';
  const reply = (v: Record<string, unknown>) => socket.write(`${JSON.stringify(v)}\n`);
  const gone = () => {
    if (!run) return;
    hooks.runs.remove(run);
    hooks.closed(run);
    run = undefined;
  };
  const handle = async (req: CtlRequest): Promise<Record<string, unknown>> => {
    switch (req.op) {
      case 'ping':
        return { ok: true, ready: hooks.ready(), runs: hooks.runs.size };
      case 'open':
        if (run) throw new Error('this connection has a run already');
        // A container another run just started may not answer yet: the run waits here, once.
        if (!(await hooks.whenReady())) throw new Error('squid did not start');
        run = hooks.runs.add(settingsOf(req.run));
        hooks.opened(run);
        return { ok: true };
      case 'call': {
        if (!run) throw new Error('no run is open');
        if (typeof req.capUsd !== 'number' || !(req.capUsd > 0)) throw new Error('call needs a positive cap');
        run.call = new CallMeter(req.capUsd);
        return { ok: true };
      }
      case 'end': {
        if (!run) throw new Error('no run is open');
        const usage = run.call?.summary() ?? null;
        run.call = null;
        return { ok: true, usage };
      }
      case 'refusals':
        if (!run) throw new Error('no run is open');
        return { ok: true, ...run.takeRefusals() };
      case 'close':
        gone();
        return { ok: true };
      default:
        throw new Error('unknown op');
    }
  };
  // One request at a time, answered in order.
  let queue: Promise<void> = Promise.resolve();
  const serve = (line: string) => {
    queue = queue.then(async () => {
      try {
        reply(await handle(JSON.parse(line) as CtlRequest));
      } catch (err) {
        reply({ ok: false, error: err instanceof Error ? err.message : String(err) });
      }
    });
  };
  socket.setEncoding('utf8');
  socket.on('data', (d: string) => {
    buffered += d;
    if (buffered.length > CTL_LINE_CAP && !buffered.includes('\n')) {
      socket.destroy();
      return;
    }
    let cut = buffered.indexOf('\n');
    while (cut >= 0) {
      serve(buffered.slice(0, cut));
      buffered = buffered.slice(cut + 1);
      cut = buffered.indexOf('\n');
    }
  });
  socket.on('close', gone);
  socket.on('error', gone);
}
