import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayHandler } from '../../plugins/sandbox-docker/egress/daemon/gateway.js';
import { costUsd } from '../../plugins/sandbox-docker/egress/daemon/prices.js';
import { CallMeter, type Run, Runs } from '../../plugins/sandbox-docker/egress/daemon/runs.js';
import * as s from '../fakes/model-script.js';
import { type ModelServer, startModelServer } from '../fakes/model-server.js';

/**
 * The model gateway's rules against the scripted model server, over real HTTP on loopback
 * (the daemon's own code, as the egress container runs it): the run's token from the run's
 * network during a call only, the model's two paths only, the client's credentials replaced by
 * the run's, the usage of each streamed answer counted, and the call's cap held.
 */
describe('egress daemon: the model gateway', () => {
  let model: ModelServer;
  let gateway: Server;
  let url = '';
  const runs = new Runs();
  let run: Run;
  const token = `chalk-run-${'t'.repeat(43)}`;
  const agent = new Agent();

  beforeAll(async () => {
    model = await startModelServer({ bridge: false });
    run = runs.add({
      subnet: '127.0.0.0/8',
      mode: 'off',
      allow: '',
      token,
      credential: { apiKey: 'sk-ant-real' },
      upstream: model.url,
    });
    gateway = createServer(gatewayHandler({ runs, dispatcherFor: () => agent }));
    await new Promise<void>((r) => gateway.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await agent.close();
    gateway?.close();
    await model?.close();
  });

  const post = (path: string, headers: Record<string, string>, marker = 'hi') =>
    fetch(url + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...headers },
      body: JSON.stringify({
        model: 'claude-sonnet-4-5',
        max_tokens: 16,
        stream: true,
        messages: [{ role: 'user', content: marker }],
      }),
    });

  it('refuses outside a call, a foreign key, another path; inside a call it sends the real key only', async () => {
    const before = model.requests.length;
    expect((await post('/v1/messages', { 'x-api-key': token })).status).toBe(403);
    run.call = new CallMeter(1);
    const foreign = await post('/v1/messages', { 'x-api-key': 'sk-ant-foreign' });
    expect(foreign.status).toBe(401);
    expect(foreign.headers.get('x-should-retry')).toBe('false');
    expect(((await foreign.json()) as { error: { type: string } }).error.type).toBe('authentication_error');
    expect((await post('/v1/files', { 'x-api-key': token })).status).toBe(403);
    expect((await post('/v1/messages/batches', { 'x-api-key': token })).status).toBe(403);
    expect(model.requests.length).toBe(before);
    const ok = await post(
      '/v1/messages?beta=true',
      { 'x-api-key': token, authorization: 'Bearer sk-ant-foreign' },
      'relayed',
    );
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('event: message_stop');
    const last = model.requests[model.requests.length - 1];
    expect(last?.credential).toBe('sk-ant-real');
    expect(last?.body?.messages[0]?.content).toBe('relayed');
    const counted = run.call.summary();
    expect(counted).toMatchObject({ requests: 1, inputTokens: 100, outputTokens: 20, model: 'claude-sonnet-4-5' });
    expect(counted.costUsd).toBeCloseTo(
      costUsd('claude-sonnet-4-5', {
        inputTokens: 100,
        outputTokens: 20,
        cacheReadTokens: 0,
        cacheCreationTokens: 0,
        cacheCreation1hTokens: 0,
      }).usd,
    );
    expect((await post('/v1/messages/count_tokens', { 'x-api-key': token })).status).toBe(200);
    expect(run.call.summary().requests).toBe(1);
    run.call = null;
  });

  it('refuses the model once the call has spent its cap, and says so', async () => {
    model.enqueue([s.say('expensive', { usage: s.HUGE_USAGE })]);
    run.call = new CallMeter(0.5);
    const first = await fetch(`${url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': token },
      body: JSON.stringify({
        model: 'claude-sonnet-4-5',
        max_tokens: 16,
        stream: true,
        tools: [{ name: 'Bash', input_schema: { type: 'object' } }],
        messages: [{ role: 'user', content: 'go' }],
      }),
    });
    await first.text();
    expect(run.call.spent).toBe(true);
    const refused = await post('/v1/messages', { 'x-api-key': token });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(
      /spent its cap of \$0\.50 \(CHALK_BUDGET_USD\)/,
    );
    expect(run.call.summary()).toMatchObject({ requests: 1, refusedOverCap: 1 });
    run.call = null;
  });

  it('forgets the token with the run', async () => {
    runs.remove(run);
    run.call = new CallMeter(1);
    expect((await post('/v1/messages', { 'x-api-key': token })).status).toBe(401);
  });
});
