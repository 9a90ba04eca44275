import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { START_MODE_REQUEST } from '../../core/agent/invocation.js';
import { parseStartMode, probeStartMode, startModeLine } from '../../core/agent/start-mode.js';
import type { OneShotRunner } from '../../core/ports/agent.js';

/** The initialize answer captured from claude 2.1.332. */
const captured = readFileSync(join(import.meta.dirname, 'agent-fixtures', 'probe-auto.jsonl'), 'utf8');
const line = (mode: unknown) =>
  JSON.stringify({
    type: 'control_response',
    response: { subtype: 'success', response: { current_permission_mode: mode } },
  });

describe('parseStartMode', () => {
  it.each<[string, string, string | undefined]>([
    ['the captured answer', captured, 'auto'],
    ['manual mode', `{"type":"system"}\n${line('default')}\n`, 'default'],
    ['no control response', '{"type":"result"}\n', undefined],
    ['a mode that is not a word', line('auto; rm'), undefined],
    ['a mode that is not a string', line(3), undefined],
    ['garbage', 'not json\n{broken', undefined],
    ['nothing', '', undefined],
  ])('%s', (_n, stdout, mode) => expect(parseStartMode(stdout)).toBe(mode));
});

describe('probeStartMode', () => {
  it('sends one initialize request and reads the answer', async () => {
    const calls: { argv: string[]; stdin?: string }[] = [];
    const runner: OneShotRunner = {
      async runOnce(argv, opts) {
        calls.push({ argv, stdin: opts.stdin });
        return { exitCode: 0, stdout: line('auto'), stderr: '', timedOut: false };
      },
    };
    expect(await probeStartMode(runner, 'sonnet')).toBe('auto');
    expect(calls).toHaveLength(1);
    expect(calls[0]?.stdin).toBe(START_MODE_REQUEST);
    expect(calls[0]?.argv).toContain('sonnet');
  });

  it('is no answer when the runner fails', async () => {
    const runner: OneShotRunner = {
      runOnce: () => Promise.reject(new Error('no docker')),
    };
    expect(await probeStartMode(runner, '')).toBeUndefined();
  });
});

describe('startModeLine', () => {
  const opts = { permissionMode: 'auto', model: '', baseUrl: '' };
  it.each<[string | undefined, Partial<typeof opts>, string, RegExp | undefined]>([
    ['auto', {}, 'ok', undefined],
    ['auto', { baseUrl: 'https://api.anthropic.com' }, 'ok', undefined],
    ['auto', { baseUrl: 'http://127.0.0.1:4000' }, 'ok', /CHALK_PERMISSION_MODE=bypass/],
    ['default', {}, 'FAIL', /manual mode.*CHALK_PERMISSION_MODE=bypass/],
    ['plan', {}, 'FAIL', /plan mode/],
    [undefined, {}, '--', /could not verify/],
    [undefined, { permissionMode: 'bypass' }, '--', /not used \(CHALK_PERMISSION_MODE=bypass\)/],
  ])('%s with %o', (mode, over, status, detail) => {
    const r = startModeLine(mode, { ...opts, ...over });
    expect(r.status).toBe(status);
    if (detail) expect(r.detail).toMatch(detail);
    else expect(r.detail).toBeUndefined();
  });

  it('names the model', () => {
    expect(startModeLine('auto', { ...opts, model: 'opus' }).label).toBe('auto mode for opus');
    expect(startModeLine('auto', opts).label).toBe('auto mode for the default model');
  });
});
