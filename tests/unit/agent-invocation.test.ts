import { describe, expect, it } from 'vitest';
import { ClaudeAgent } from '../../core/agent/driver.js';
import {
  type AgentSettings,
  accessOf,
  buildInvocation,
  READ_ONLY_TOOLS,
  shellQuote,
  startModeInvocation,
} from '../../core/agent/invocation.js';
import { answerJsonSchema, parseAnswer } from '../../core/agent/schemas.js';
import { CALL_KINDS, type CallKind, isLoopKind, LOOP_KINDS } from '../../core/ports/agent.js';

const settings: AgentSettings = {
  budgetUsd: '1.00',
  permissionMode: 'auto',
  model: 'opus',
  cheapModel: 'haiku',
  reviewModel: '',
};

const valueAfter = (argv: string[], flag: string) => argv[argv.indexOf(flag) + 1];

describe('buildInvocation', () => {
  it.each<[CallKind, Partial<AgentSettings>, string[], string[]]>([
    ['continue', {}, ['--model', 'opus', '--permission-mode', 'auto'], ['--dangerously-skip-permissions']],
    [
      'retry',
      { permissionMode: 'bypass' },
      ['--model', 'opus', '--dangerously-skip-permissions'],
      ['--permission-mode'],
    ],
    ['fix-review', { model: '' }, ['--permission-mode', 'auto'], ['--model']],
    ['spec-check', {}, ['--model', 'haiku', '--permission-mode', 'dontAsk', '--allowedTools', ...READ_ONLY_TOOLS], []],
    ['review', {}, ['--permission-mode', 'dontAsk', '--allowedTools', 'Read', 'Grep', 'Glob'], ['--model']],
    ['review', { reviewModel: 'sonnet' }, ['--model', 'sonnet', '--permission-mode', 'dontAsk'], []],
    [
      'distill',
      { permissionMode: 'bypass' },
      ['--model', 'haiku', '--permission-mode', 'dontAsk'],
      ['--dangerously-skip-permissions'],
    ],
  ])('%s with %o', (kind, over, contains, lacks) => {
    const argv = buildInvocation({ kind, settings: { ...settings, ...over }, systemPromptFile: '/chalk/system.md' });
    expect(argv.slice(0, 4)).toEqual(['claude', '-p', '--output-format', 'json']);
    expect(valueAfter(argv, '--max-budget-usd')).toBe('1.00');
    expect(valueAfter(argv, '--append-system-prompt-file')).toBe('/chalk/system.md');
    expect(JSON.parse(valueAfter(argv, '--json-schema') as string)).toEqual(JSON.parse(answerJsonSchema(kind)));
    const line = argv.join('\u0000');
    expect(line).toContain(contains.join('\u0000'));
    for (const flag of lacks) expect(argv).not.toContain(flag);
  });

  it('keeps the variadic tool list last, so nothing after it is taken for a tool', () => {
    const argv = buildInvocation({ kind: 'review', settings, systemPromptFile: '/s' });
    expect(argv.slice(-READ_ONLY_TOOLS.length - 1)).toEqual(['--allowedTools', ...READ_ONLY_TOOLS]);
  });

  it('plans in a sandbox like a review: a system prompt, the loop model, read-only tools only', () => {
    expect(() => buildInvocation({ kind: 'plan', settings })).toThrow(/system prompt/);
    const argv = buildInvocation({ kind: 'plan', settings, systemPromptFile: '/chalk/system.md' });
    expect(valueAfter(argv, '--model')).toBe('opus');
    expect(argv.slice(-READ_ONLY_TOOLS.length - 3)).toEqual([
      '--permission-mode',
      'dontAsk',
      '--allowedTools',
      ...READ_ONLY_TOOLS,
    ]);
  });

  it('refuses a sandboxed call without a system prompt file', () => {
    expect(() => buildInvocation({ kind: 'continue', settings })).toThrow(/system prompt/);
  });

  it('lets the caller override the model', () => {
    const argv = buildInvocation({ kind: 'spec-check', settings, systemPromptFile: '/s', model: 'sonnet' });
    expect(valueAfter(argv, '--model')).toBe('sonnet');
  });

  it('gives write access only to loops', () => {
    expect(CALL_KINDS.filter((k) => accessOf(k) === 'write')).toEqual([...LOOP_KINDS]);
    expect(CALL_KINDS.filter(isLoopKind)).toEqual(['continue', 'retry', 'fix-review']);
    expect(isLoopKind('review')).toBe(false);
  });

  it.each([{}, { model: '' }, { reviewModel: 'sonnet' }, { cheapModel: '' }])(
    'the Agent port names the model each kind asks for, as its invocation passes it (%o)',
    (over) => {
      const s = { ...settings, ...over };
      const agent = new ClaudeAgent(s);
      for (const kind of CALL_KINDS) {
        const argv = buildInvocation({ kind, settings: s, systemPromptFile: '/chalk/system.md' });
        const passed = argv.includes('--model') ? valueAfter(argv, '--model') : '';
        expect(agent.modelFor(kind), kind).toBe(passed);
      }
    },
  );

  it('never puts a prompt or a credential on the command line', () => {
    for (const kind of CALL_KINDS) {
      const argv = buildInvocation({ kind, settings, systemPromptFile: '/chalk/system.md' });
      expect(argv.join(' ')).not.toMatch(/sk-|API_KEY|TOKEN/);
    }
  });
});

describe('answer schemas', () => {
  it.each<[CallKind, string[]]>([
    ['continue', ['status', 'summary']],
    ['spec-check', ['verdict', 'problems']],
    ['review', ['verdict', 'summary', 'findings']],
    ['distill', ['lesson', 'scope']],
    ['plan', ['workstreams']],
  ])('%s requires %o and names no $schema', (kind, required) => {
    const s = JSON.parse(answerJsonSchema(kind));
    expect(s.type).toBe('object');
    expect(s.required).toEqual(required);
    expect(s.$schema).toBeUndefined();
  });

  it.each<[CallKind, unknown, boolean]>([
    ['continue', { status: 'done', summary: 's', checkpoint: '1' }, true],
    ['continue', { status: 'blocked', summary: 's', blocker: 'no db' }, true],
    ['continue', { status: 'maybe', summary: 's' }, false],
    ['continue', { status: 'done' }, false],
    ['continue', 'done', false],
    ['continue', null, false],
    ['spec-check', { verdict: 'fail', problems: [{ checkpoint: '2', problem: 'vague' }] }, true],
    ['spec-check', { verdict: 'fail', problems: [{ checkpoint: '2' }] }, false],
    ['review', { verdict: 'pass', summary: 'ok', findings: [] }, true],
    ['review', { verdict: 'fail', summary: 'x', findings: [{ severity: 'major', issue: 'y' }] }, false],
    ['distill', { lesson: 'When x, do y, because z.', scope: 'general' }, true],
    ['distill', { lesson: '', scope: 'everywhere' }, false],
    ['plan', { workstreams: [{ ticket: 'A-1', title: 't', checkpoints: ['a'] }] }, true],
    ['plan', { workstreams: [{ ticket: 'A-1', title: 't', checkpoints: 'a' }] }, false],
  ])('%s answer %j valid=%s', (kind, value, valid) => {
    const a = parseAnswer(kind, value);
    if (valid) expect(a).toEqual(value);
    else expect(a).toBe('none');
  });
});

describe('shellQuote', () => {
  it('quotes every argument so a shell gives back the same argv', async () => {
    const { execFileSync } = await import('node:child_process');
    const argv = ['printf', '%s\\n', "it's", 'a b', '{"x":"$HOME `id`"}', 'Bash(git diff *)', ''];
    const out = execFileSync('sh', ['-c', shellQuote(argv)], { encoding: 'utf8' });
    expect(out).toBe(`${argv.slice(2).join('\n')}\n`);
  });
});

describe('startModeInvocation', () => {
  it('asks in auto mode with no budget flag, adding the model when set', () => {
    expect(startModeInvocation('')).not.toContain('--max-budget-usd');
    expect(startModeInvocation('').join(' ')).toContain('--input-format stream-json --output-format stream-json');
    expect(startModeInvocation('sonnet').slice(-4)).toEqual(['--permission-mode', 'auto', '--model', 'sonnet']);
  });
});
