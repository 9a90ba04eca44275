import { createHash, timingSafeEqual } from 'node:crypto';
import { isIPv4 } from 'node:net';
import { type Policy, parseAllowList } from './policy.js';
import { costUsd, type TokenUsage } from './prices.js';
import type { ResponseUsage } from './usage.js';

/**
 * The runs the egress container serves, each known by its network (the subnet its sandbox
 * sends from) and its token. A run exists while the host's control connection for it is open;
 * when that closes (the run ended, or the host's process died), the run and its token are gone.
 */

export interface Credential {
  /** Sent upstream as `x-api-key`. */
  apiKey?: string;
  /** Sent upstream as `Authorization: Bearer` (a gateway's token). */
  authToken?: string;
  /** A Claude subscription's token: `Authorization: Bearer` and the OAuth beta header. */
  oauthToken?: string;
}

export interface RunSettings {
  /** The run's network, `a.b.c.d/n`: its sandbox's requests come from there. */
  subnet: string;
  mode: Policy['mode'];
  /** `host[:port],...` the person allows on top of the mode. */
  allow: string;
  /** The per-run token the sandbox's claude sends instead of a key. */
  token: string;
  credential: Credential;
  /** The model endpoint, `http(s)://host[:port][/base]`. */
  upstream: string;
  /** The proxy the gateway reaches the endpoint through, as the host's environment names it. */
  proxy?: { http?: string; https?: string; noProxy?: string };
}

/** What the gateway counted for one agent call. */
export interface CallUsage extends Omit<TokenUsage, 'cacheCreation1hTokens'> {
  costUsd: number;
  /** The model that cost the most. */
  model: string;
  requests: number;
  /** Responses whose usage could not be read (not counted). */
  unmetered: number;
  /** Models the price table does not know (priced as the dearest). */
  unpriced: string[];
  /** Requests refused because the call's cap was spent. */
  refusedOverCap: number;
}

export class CallMeter {
  costUsd = 0;
  readonly tokens: TokenUsage = {
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheCreationTokens: 0,
    cacheCreation1hTokens: 0,
  };
  private readonly byModel = new Map<string, number>();
  private readonly unpriced = new Set<string>();
  requests = 0;
  unmetered = 0;
  refusedOverCap = 0;

  constructor(readonly capUsd: number) {}

  get spent(): boolean {
    return this.costUsd >= this.capUsd;
  }

  add(u: ResponseUsage | null): void {
    this.requests++;
    if (!u) {
      this.unmetered++;
      return;
    }
    const { usd, known } = costUsd(u.model, u);
    if (!known) this.unpriced.add(u.model || '(none)');
    this.costUsd += usd;
    for (const k of Object.keys(this.tokens) as (keyof TokenUsage)[]) this.tokens[k] += u[k];
    this.byModel.set(u.model, (this.byModel.get(u.model) ?? 0) + usd);
  }

  summary(): CallUsage {
    let model = '';
    let best = -1;
    for (const [m, c] of this.byModel) {
      if (c > best) {
        model = m;
        best = c;
      }
    }
    const { cacheCreation1hTokens: _, ...tokens } = this.tokens;
    return {
      ...tokens,
      costUsd: this.costUsd,
      model,
      requests: this.requests,
      unmetered: this.unmetered,
      unpriced: [...this.unpriced],
      refusedOverCap: this.refusedOverCap,
    };
  }
}

/**
 * Why a destination was refused: not on the run's allowlist (`policy`), a name resolving to a
 * refused range (`private`), a TLS server name that differs (`sni`), bytes that are not TLS in
 * a tunnel (`protocol`), a DNS query (`dns`), a request the model gateway refused
 * (`gateway`), or a loopback address, the proxy's own (`loopback`). Only the first two are the
 * person's to allow.
 */
export const REFUSAL_KINDS = ['policy', 'private', 'loopback', 'sni', 'protocol', 'dns', 'gateway'] as const;
export type RefusalKind = (typeof REFUSAL_KINDS)[number];

/** One refused destination of a run, counted. */
export interface Refusal {
  host: string;
  port: number;
  kind: RefusalKind;
  reason: string;
  count: number;
  /** Unix seconds of the first and last refusal since the host last asked. */
  first: number;
  last: number;
}

/** Distinct refusals a run keeps between two reads by the host; past it they are counted only. */
export const REFUSALS_CAP = 256;

const digest = (token: string) => createHash('sha256').update(token).digest();

function ipv4(ip: string): number | null {
  if (!isIPv4(ip)) return null;
  return ip.split('.').reduce((n, p) => n * 256 + Number(p), 0);
}

export function parseSubnet(cidr: string): { base: number; mask: number } | null {
  const [ip = '', bitsText = ''] = cidr.split('/');
  const base = ipv4(ip);
  const bits = Number(bitsText);
  if (base === null || !/^[0-9]{1,2}$/.test(bitsText) || bits < 8 || bits > 30) return null;
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return { base: (base & mask) >>> 0, mask };
}

export class Run {
  readonly policy: Policy;
  readonly tokenDigest: Buffer;
  private readonly net: { base: number; mask: number };
  call: CallMeter | null = null;
  private refusals = new Map<string, Refusal>();
  private droppedRefusals = 0;

  constructor(
    readonly id: number,
    readonly settings: RunSettings,
  ) {
    const net = parseSubnet(settings.subnet);
    if (!net) throw new Error(`not an IPv4 subnet: ${settings.subnet}`);
    this.net = net;
    const { entries, errors } = parseAllowList(settings.allow);
    if (errors.length > 0) throw new Error(errors[0]);
    this.policy = { mode: settings.mode, allow: entries };
    this.tokenDigest = digest(settings.token);
  }

  contains(ip: string): boolean {
    const n = ipv4(ip.replace(/^::ffff:/, ''));
    return n !== null && (n & this.net.mask) >>> 0 === this.net.base;
  }

  refused(host: string, port: number, kind: RefusalKind, reason: string, at: number): void {
    const key = `${host}\0${port}\0${kind}\0${reason}`;
    const r = this.refusals.get(key);
    if (r) {
      r.count++;
      r.last = at;
    } else if (this.refusals.size < REFUSALS_CAP) {
      this.refusals.set(key, { host, port, kind, reason, count: 1, first: at, last: at });
    } else {
      this.droppedRefusals++;
    }
  }

  /** The refusals since the last call, and how many did not fit. */
  takeRefusals(): { entries: Refusal[]; dropped: number } {
    const out = { entries: [...this.refusals.values()], dropped: this.droppedRefusals };
    this.refusals = new Map();
    this.droppedRefusals = 0;
    return out;
  }
}

export class Runs {
  private readonly all = new Map<number, Run>();
  private next = 1;

  add(settings: RunSettings): Run {
    const run = new Run(this.next++, settings);
    for (const other of this.all.values()) {
      if (other.settings.subnet === settings.subnet) throw new Error(`subnet ${settings.subnet} is another run's`);
    }
    this.all.set(run.id, run);
    return run;
  }

  remove(run: Run): void {
    this.all.delete(run.id);
  }

  bySource(ip: string): Run | undefined {
    for (const r of this.all.values()) if (r.contains(ip)) return r;
    return undefined;
  }

  /** The run whose token this is (compared in constant time), or undefined. */
  byToken(token: string): Run | undefined {
    const d = digest(token);
    let found: Run | undefined;
    for (const r of this.all.values()) if (timingSafeEqual(r.tokenDigest, d)) found = r;
    return found;
  }

  get size(): number {
    return this.all.size;
  }
}
