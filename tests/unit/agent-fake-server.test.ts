import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as s from '../fakes/model-script.js';
import { type ModelServer, startModelServer } from '../fakes/model-server.js';

/** The fake model server over HTTP: scripted SSE, protocol refusals, sessions. */
const headers = (session: string) => ({
  'content-type': 'application/json',
  'anthropic-version': '2023-06-01',
  'x-api-key': 'dummy',
  'x-claude-code-session-id': session,
});
const tools = [{ name: 'Bash', input_schema: { type: 'object' } }];

describe('the fake model server', () => {
  let server: ModelServer;
  beforeAll(async () => {
    server = await startModelServer({ bridge: false });
  });
  afterAll(() => server.close());

  const post = (session: string, body: unknown) =>
    fetch(`${server.url}/v1/messages`, { method: 'POST', headers: headers(session), body: JSON.stringify(body) });

  it('streams a scripted tool call as Messages API events', async () => {
    server.enqueue([s.bash('echo hi')]);
    const res = await post('a', {
      model: 'm',
      max_tokens: 10,
      stream: true,
      tools,
      messages: [{ role: 'user', content: 'go' }],
    });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const text = await res.text();
    const events = [...text.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
    expect(events).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    const data = [...text.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1] as string));
    const json = data
      .filter((d) => d.delta?.type === 'input_json_delta')
      .map((d) => d.delta.partial_json)
      .join('');
    expect(JSON.parse(json)).toEqual({ command: 'echo hi', description: 'scripted command' });
    expect(data.find((d) => d.type === 'message_delta').delta.stop_reason).toBe('tool_use');
  });

  it('answers without streaming when not asked to stream, and continues the same session', async () => {
    server.enqueue([s.bash('ls'), s.say('done')]);
    const reply = await post('b', { model: 'm', max_tokens: 10, tools, messages: [{ role: 'user', content: 'go' }] });
    const first = (await reply.json()) as { content: { id: string }[] };
    const id = first.content[0]?.id;
    const second = await post('b', {
      model: 'm',
      max_tokens: 10,
      tools,
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: 'a.txt' }] },
      ],
    });
    expect(((await second.json()) as { content: unknown }).content).toEqual([{ type: 'text', text: 'done' }]);
    expect(server.toolResults.at(-1)).toEqual({ toolUseId: id, content: 'a.txt', isError: false });
  });

  it('refuses and records a request that breaks the protocol', async () => {
    const before = server.violations.length;
    const res = await post('c', { model: 'm', messages: [{ role: 'user', content: 'go' }] });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { type: string } }).error.type).toBe('invalid_request_error');
    expect(server.violations.slice(before).join()).toMatch(/max_tokens/);
  });

  it('answers 404 to a route the CLI is not known to use, and records it', async () => {
    const res = await fetch(`${server.url}/v1/unheard-of`);
    expect(res.status).toBe(404);
    expect(server.requests.at(-1)).toMatchObject({ method: 'GET', path: '/v1/unheard-of' });
  });
});
