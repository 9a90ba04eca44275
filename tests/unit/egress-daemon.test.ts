import { describe, expect, it } from 'vitest';
import { readLogLine } from '../../plugins/sandbox-docker/egress/daemon/accesslog.js';
import { queryName, refusedAnswer } from '../../plugins/sandbox-docker/egress/daemon/dns.js';
import { answer, PROBE_HOST } from '../../plugins/sandbox-docker/egress/daemon/helper.js';
import { costUsd, priceOf } from '../../plugins/sandbox-docker/egress/daemon/prices.js';
import { CallMeter, REFUSALS_CAP, type RunSettings, Runs } from '../../plugins/sandbox-docker/egress/daemon/runs.js';
import { squidConf } from '../../plugins/sandbox-docker/egress/daemon/squid-conf.js';
import { UsageMeter } from '../../plugins/sandbox-docker/egress/daemon/usage.js';

const settings = (over: Partial<RunSettings> = {}): RunSettings => ({
  subnet: '172.30.0.0/16',
  mode: 'registries',
  allow: '172.17.0.1:9000',
  token: `chalk-run-${'a'.repeat(40)}`,
  credential: { apiKey: 'sk-real' },
  upstream: 'http://host.docker.internal:1',
  ...over,
});

describe('egress daemon: runs', () => {
  it('knows a run by its network and by its token, and forgets both when it is removed', () => {
    const runs = new Runs();
    const run = runs.add(settings());
    expect(runs.bySource('172.30.4.5')).toBe(run);
    expect(runs.bySource('::ffff:172.30.4.5')).toBe(run);
    expect(runs.bySource('172.31.0.2')).toBeUndefined();
    expect(runs.byToken(run.settings.token)).toBe(run);
    expect(runs.byToken(`${run.settings.token}x`)).toBeUndefined();
    expect(() => runs.add(settings({ token: `chalk-run-${'b'.repeat(40)}` }))).toThrow(/another run's/);
    runs.remove(run);
    expect(runs.bySource('172.30.4.5')).toBeUndefined();
    expect(runs.byToken(run.settings.token)).toBeUndefined();
  });

  it('counts refusals per destination and reason, keeps at most a cap of distinct ones, and hands them over once', () => {
    const run = new Runs().add(settings());
    run.refused('a.example', 443, 'policy', 'r', 1);
    run.refused('a.example', 443, 'policy', 'r', 2);
    for (let i = 0; i < REFUSALS_CAP + 5; i++) run.refused(`h${i}.example`, 443, 'policy', 'r', 3);
    const taken = run.takeRefusals();
    expect(taken.entries[0]).toEqual({
      host: 'a.example',
      port: 443,
      kind: 'policy',
      reason: 'r',
      count: 2,
      first: 1,
      last: 2,
    });
    expect(taken.entries).toHaveLength(REFUSALS_CAP);
    expect(taken.dropped).toBe(6);
    expect(run.takeRefusals()).toEqual({ entries: [], dropped: 0 });
  });
});

describe('egress daemon: Squid helper answers', () => {
  const runs = new Runs();
  runs.add(settings());
  it('asks the run of the source for the front port and compares server names on the SNI port', () => {
    expect(answer(runs, '7 3128 172.30.0.3 CONNECT registry.npmjs.org 443 -')).toBe('7 OK');
    expect(answer(runs, '8 3128 172.30.0.3 CONNECT 172.17.0.1 9000 -')).toBe('8 OK tag=address');
    expect(answer(runs, '9 3128 172.30.0.3 CONNECT evil.example 443 -')).toMatch(
      /^9 ERR message="evil\.example:443 is not on this run's allowlist/,
    );
    expect(answer(runs, '10 3128 172.99.0.3 CONNECT registry.npmjs.org 443 -')).toMatch(/^10 ERR .*no sandbox/);
    expect(answer(runs, '11 3129 172.30.0.3 CONNECT registry.npmjs.org 443 registry.npmjs.org')).toBe('11 OK');
    expect(answer(runs, '12 3129 172.30.0.3 CONNECT registry.npmjs.org 443 evil.example')).toMatch(/^12 ERR .*differs/);
    expect(answer(runs, `13 3128 127.0.0.1 CONNECT ${PROBE_HOST} 443 -`)).toBe('13 OK');
    expect(answer(runs, `14 3128 127.0.0.1 CONNECT ${PROBE_HOST} 80 -`)).toMatch(/^14 ERR/);
  });

  it('never lets a quote or line break of a host into the message it writes back', () => {
    const a = answer(runs, '15 3128 172.30.0.3 CONNECT a%22b%0Ac 443 -');
    expect(a.split('\n')).toHaveLength(1);
    expect(a.slice(a.indexOf('"') + 1, -1)).not.toContain('"');
  });
});

describe('egress daemon: access log', () => {
  it('counts a front-port 403, a private-range refusal, a mismatched server name and bytes that are not TLS', () => {
    const runs = new Runs();
    const run = runs.add(settings());
    expect(
      readLogLine(runs, '1796164805.083 F 172.30.0.3 CONNECT 443 403 TCP_DENIED ERR_CHALK_EGRESS evil.example'),
    ).toBe(true);
    expect(
      readLogLine(runs, '1796164805.083 F 172.30.0.3 CONNECT 443 403 TCP_DENIED ERR_CHALK_PRIVATE localtest.me'),
    ).toBe(true);
    expect(
      readLogLine(
        runs,
        '1796164805.153 S 172.30.0.3 CONNECT 443 200 NONE_NONE - terminate registry.npmjs.org a.example b',
      ),
    ).toBe(true);
    expect(
      readLogLine(
        runs,
        '1796164805.404 S 172.30.0.3 CONNECT 443 200 NONE_NONE ERR_PROTOCOL_UNKNOWN peek registry.npmjs.org -',
      ),
    ).toBe(true);
    // Allowed traffic, another network's, and garbage are no refusals of this run.
    expect(readLogLine(runs, '1796164805.386 F 172.30.0.3 CONNECT 443 200 TCP_TUNNEL - registry.npmjs.org')).toBe(
      false,
    );
    expect(
      readLogLine(runs, '1796164805.083 F 10.0.0.3 CONNECT 443 403 TCP_DENIED ERR_CHALK_EGRESS evil.example'),
    ).toBe(false);
    expect(readLogLine(runs, 'x'.repeat(10_000))).toBe(false);
    // The proxy's own loopback is never the person's to allow.
    expect(
      readLogLine(runs, '1796164805.083 F 172.30.0.3 CONNECT 8080 403 TCP_DENIED ERR_CHALK_EGRESS %5B::1%5D'),
    ).toBe(true);
    const reasons = run.takeRefusals().entries.map((e) => [e.host, e.port, e.kind, e.reason.split(';')[0]]);
    expect(reasons).toEqual([
      ['evil.example', 443, 'policy', "evil.example:443 is not on this run's allowlist (CHALK_EGRESS=registries)"],
      [
        'localtest.me',
        443,
        'private',
        'localtest.me:443 resolves to a loopback, private or link-local address, which the egress proxy refuses',
      ],
      [
        'registry.npmjs.org',
        443,
        'sni',
        'the TLS server name a.example b differs from the CONNECT name registry.npmjs.org. Do not retry.',
      ],
      [
        'registry.npmjs.org',
        443,
        'protocol',
        'what went through the tunnel is not TLS: the egress proxy carries only TLS through CONNECT (use https, not ssh or raw TCP). Do not retry.',
      ],
      [
        '::1',
        8080,
        'loopback',
        "[::1]:8080 is an address, not a name on this run's allowlist (CHALK_EGRESS=registries)",
      ],
    ]);
  });
});

describe('egress daemon: DNS refuser', () => {
  // A query for evil.example, type A, recursion desired.
  const query = Buffer.from([
    0x12,
    0x34,
    0x01,
    0x00,
    0x00,
    0x01,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    4,
    ...Buffer.from('evil'),
    7,
    ...Buffer.from('example'),
    0,
    0x00,
    0x01,
    0x00,
    0x01,
  ]);
  it('answers REFUSED with the same id and question, and names what was asked', () => {
    const a = refusedAnswer(query) as Buffer;
    expect(a.readUInt16BE(0)).toBe(0x1234);
    expect((a[2] as number) & 0x80).toBe(0x80);
    expect((a[3] as number) & 0x0f).toBe(5);
    expect(a.readUInt16BE(4)).toBe(1);
    expect(a.subarray(12)).toEqual(query.subarray(12));
    expect(queryName(query)).toBe('evil.example');
    expect(refusedAnswer(a)).toBeNull();
    expect(refusedAnswer(Buffer.alloc(3))).toBeNull();
  });
});

describe('egress daemon: usage and price', () => {
  const sse = (events: object[]) => events.map((e) => `event: x\ndata: ${JSON.stringify(e)}\n\n`).join('');

  it('reads a streamed response cut anywhere: the model, the input side, the largest output count', () => {
    const body = sse([
      {
        type: 'message_start',
        message: {
          model: 'claude-sonnet-4-5',
          usage: { input_tokens: 1000, cache_read_input_tokens: 500, output_tokens: 1 },
        },
      },
      { type: 'content_block_delta', delta: { text: 'ünïcödé' } },
      { type: 'message_delta', usage: { output_tokens: 200 } },
      { type: 'message_stop' },
    ]);
    const bytes = Buffer.from(body);
    for (const cut of [1, 7, 64, bytes.length - 3]) {
      const m = new UsageMeter(true);
      m.push(bytes.subarray(0, cut));
      m.push(bytes.subarray(cut));
      expect(m.end(), `cut at ${cut}`).toMatchObject({
        model: 'claude-sonnet-4-5',
        inputTokens: 1000,
        cacheReadTokens: 500,
        outputTokens: 200,
      });
    }
  });

  it('reads a whole JSON message, and reports nothing for a body it cannot read', () => {
    const m = new UsageMeter(false);
    m.push(Buffer.from(JSON.stringify({ model: 'claude-haiku-4-5', usage: { input_tokens: 10, output_tokens: 2 } })));
    expect(m.end()).toMatchObject({ model: 'claude-haiku-4-5', inputTokens: 10, outputTokens: 2 });
    const bad = new UsageMeter(false);
    bad.push(Buffer.from('not json'));
    expect(bad.end()).toBeNull();
    const none = new UsageMeter(true);
    none.push(Buffer.from('event: ping\ndata: {}\n\n'));
    expect(none.end()).toBeNull();
  });

  it('prices by model family, cache writes and reads included, and an unknown model as the dearest', () => {
    const u = {
      inputTokens: 1_000_000,
      outputTokens: 1_000_000,
      cacheReadTokens: 0,
      cacheCreationTokens: 0,
      cacheCreation1hTokens: 0,
    };
    expect(costUsd('claude-sonnet-4-5-20250929', u)).toEqual({ usd: 18, known: true });
    expect(costUsd('claude-opus-4-1', u).usd).toBe(90);
    expect(costUsd('claude-opus-4-5', u).usd).toBe(30);
    expect(costUsd('claude-haiku-4-5', u).usd).toBe(6);
    expect(costUsd('mystery-model', u)).toEqual({ usd: 90, known: false });
    const cache = {
      ...u,
      inputTokens: 0,
      outputTokens: 0,
      cacheCreationTokens: 1_000_000,
      cacheCreation1hTokens: 400_000,
      cacheReadTokens: 1_000_000,
    };
    expect(costUsd('claude-sonnet-4', cache).usd).toBeCloseTo(3 * (0.6 * 1.25 + 0.4 * 2 + 0.1));
    expect(priceOf('us.anthropic.claude-sonnet-4-5').known).toBe(true);
  });

  it('sums a call, names the dearest model, counts what it could not read, and is spent at its cap', () => {
    const call = new CallMeter(0.01);
    call.add({
      model: 'claude-haiku-4-5',
      inputTokens: 1000,
      outputTokens: 100,
      cacheReadTokens: 0,
      cacheCreationTokens: 0,
      cacheCreation1hTokens: 0,
    });
    call.add(null);
    expect(call.spent).toBe(false);
    call.add({
      model: 'claude-sonnet-4-5',
      inputTokens: 2000,
      outputTokens: 500,
      cacheReadTokens: 0,
      cacheCreationTokens: 0,
      cacheCreation1hTokens: 0,
    });
    expect(call.spent).toBe(true);
    expect(call.summary()).toMatchObject({
      model: 'claude-sonnet-4-5',
      requests: 3,
      unmetered: 1,
      inputTokens: 3000,
      outputTokens: 600,
    });
    expect(call.summary().costUsd).toBeCloseTo(0.0015 + 0.0135);
  });
});

describe('egress daemon: Squid configuration', () => {
  it('refuses the private ranges, checks server names on a loopback port, and chains to an upstream proxy when given', () => {
    const plain = squidConf(null);
    expect(plain).toMatch(
      /^acl refused_range dst 0\.0\.0\.0\/8 10\.0\.0\.0\/8 .*169\.254\.0\.0\/16 172\.16\.0\.0\/12 /m,
    );
    expect(plain).toMatch(/^http_port 127\.0\.0\.1:3129 name=sni ssl-bump /m);
    expect(plain).toContain('ssl_bump splice step2 sni_ok\nssl_bump terminate all');
    expect(plain).not.toContain('name=upstream');
    const chained = squidConf({ host: 'proxy.corp', port: 8080, login: 'u:p' });
    expect(chained).toContain(
      'cache_peer proxy.corp parent 8080 0 no-query no-digest no-netdb-exchange name=upstream login=u:p',
    );
    expect(chained).toContain('never_direct allow all');
  });
});
