import { describe, expect, it } from 'vitest';
import { checkRequest } from '../fakes/model-protocol.js';

/** The fake model server must refuse what a real Messages API would, so protocol drift fails tests. */
const headers = { 'anthropic-version': '2023-06-01', 'x-api-key': 'dummy' };
const user = (content: unknown) => ({ role: 'user', content });
const assistant = (content: unknown) => ({ role: 'assistant', content });
const toolUse = (id: string, name = 'Bash') => ({ type: 'tool_use', id, name, input: { command: 'ls' } });
const toolResult = (id: string) => ({ type: 'tool_result', tool_use_id: id, content: 'ok' });
const tools = [{ name: 'Bash', input_schema: { type: 'object' } }];
const body = (messages: unknown[], extra: Record<string, unknown> = {}) => ({
  model: 'claude-x',
  max_tokens: 1000,
  messages,
  tools,
  ...extra,
});

describe('checkRequest', () => {
  it('accepts a sound tool round trip', () => {
    const r = checkRequest(headers, body([user('go'), assistant([toolUse('t1')]), user([toolResult('t1')])]));
    expect(r.problems).toEqual([]);
  });

  it.each<[string, Record<string, string>, unknown, RegExp]>([
    ['no model', headers, { max_tokens: 1, messages: [user('x')] }, /model/],
    ['no max_tokens', headers, { model: 'm', messages: [user('x')] }, /max_tokens/],
    ['no messages', headers, { model: 'm', max_tokens: 1, messages: [] }, /messages/],
    ['a bad role', headers, body([{ role: 'robot', content: 'x' }]), /role/],
    [
      'a tool_use without id',
      headers,
      body([user('go'), assistant([{ type: 'tool_use', name: 'Bash', input: {} }]), user('x')]),
      /messages/,
    ],
    ['no api version', { 'x-api-key': 'k' }, body([user('x')]), /anthropic-version/],
    ['no credential', { 'anthropic-version': '1' }, body([user('x')]), /x-api-key/],
    [
      'a result for an unknown tool_use',
      headers,
      body([user('go'), assistant([toolUse('t1')]), user([toolResult('t1'), toolResult('t9')])]),
      /unknown tool_use t9/,
    ],
    [
      'an unanswered tool_use',
      headers,
      body([user('go'), assistant([toolUse('t1'), toolUse('t2')]), user([toolResult('t1')])]),
      /t2 got no tool_result/,
    ],
    [
      'a call of a tool not offered',
      headers,
      body([user('go'), assistant([toolUse('t1', 'Nuke')]), user([toolResult('t1')])]),
      /unknown tool Nuke/,
    ],
    ['ending on an assistant message', headers, body([user('go'), assistant('hi')]), /last message/],
    ['starting with the assistant', headers, body([assistant('hi'), user('x')]), /start with a user/],
  ])('refuses %s', (_n, h, b, problem) => {
    const r = checkRequest(h, b);
    expect(r.problems.join('\n')).toMatch(problem);
  });
});
