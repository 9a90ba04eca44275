import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UserError } from '../../core/errors.js';
import { SHARE_DIR } from '../../core/paths.js';
import { CALL_KINDS, LOOP_KINDS } from '../../core/ports/agent.js';
import {
  buildBreakdownPrompt,
  buildDistillPrompt,
  buildReviewPrompt,
  buildSpecCheckPrompt,
  buildSystemPrompt,
  checkPrompts,
  type LoopPromptInput,
  loadPrompt,
  loopMode,
  loopPromptContext,
  PROMPT_NAMES,
  type PromptSource,
  promptSetHash,
  readTextbook,
  renderLoopPrompt,
} from '../../core/run/base/prompt.js';
import { CALL_PROMPTS } from '../../core/setup/prompts.js';

const shipped = (name: string) => readFileSync(join(SHARE_DIR, 'prompts', `${name}.md`), 'utf8');

let root: string;
let source: PromptSource;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'chalk-prompts-'));
  source = { root };
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const override = (name: string, text: string) => {
  mkdirSync(join(root, '.chalk', 'prompts'), { recursive: true });
  writeFileSync(join(root, '.chalk', 'prompts', `${name}.md`), text);
};

const loop = (extra: Partial<LoopPromptInput> = {}): LoopPromptInput => ({
  ticket: 'SHOP-7',
  loop: 1,
  mode: 'continue',
  rubricCommand: 'npm test',
  repo: 'shop',
  runId: 'SHOP-7-1700000000',
  recall: { repo: 'shop', mode: 'spec', query: '# SHOP-7', fingerprint: null, firstError: null },
  findings: '',
  failure: '',
  ...extra,
});
const build = (input: LoopPromptInput) => renderLoopPrompt(loopPromptContext(input, source), input);

describe('the shipped prompts', () => {
  it.each(PROMPT_NAMES)('%s exists, is substantial and uses only placeholders it has', (name) => {
    const text = shipped(name);
    expect(text.split(/\s+/).length).toBeGreaterThan(80);
    expect(() => checkPrompts({ root: null })).not.toThrow();
  });

  it('are documented, each with its placeholders', () => {
    const readme = readFileSync(join(SHARE_DIR, 'prompts', 'README.md'), 'utf8');
    for (const name of PROMPT_NAMES) expect(readme).toContain(`\`${name}.md\``);
    for (const p of ['TICKET', 'SPEC_FILE', 'NOTES_FILE', 'RUBRIC_COMMAND', 'BASE_REF', 'EPIC']) {
      expect(readme).toContain(`{{${p}}}`);
    }
  });
});

describe('call kinds and prompt names', () => {
  it('give every call kind its own prompt, and name a prompt for nothing else but the system prompt', () => {
    const mapped = CALL_KINDS.map((kind) => CALL_PROMPTS[kind]);
    expect(new Set(mapped).size).toBe(CALL_KINDS.length);
    expect(Object.keys(CALL_PROMPTS).sort()).toEqual([...CALL_KINDS].sort());
    expect([...PROMPT_NAMES].sort()).toEqual(['system', ...mapped].sort());
    expect(new Set(PROMPT_NAMES).size).toBe(PROMPT_NAMES.length);
  });

  it('are the shipped prompt files, no more and no fewer', () => {
    const files = readdirSync(join(SHARE_DIR, 'prompts'))
      .filter((f) => f.endsWith('.md') && f !== 'README.md')
      .map((f) => f.slice(0, -3));
    expect(files.sort()).toEqual([...PROMPT_NAMES].sort());
  });

  it('keep the order the prompt-set hash reads them in (a new order would change every recorded hash)', () => {
    expect(PROMPT_NAMES).toEqual([
      'system',
      'continue',
      'retry',
      'fix-review',
      'spec-check',
      'review',
      'distill',
      'breakdown',
    ]);
  });

  it('ask each loop kind with its own prompt', () => {
    for (const kind of LOOP_KINDS) expect(CALL_PROMPTS[kind]).toBe(kind);
  });
});

describe('the loop prompt', () => {
  it('puts the paths and the rubric first and the mode prompt last', () => {
    const text = build(loop());
    const filled = shipped('continue')
      .replaceAll('{{SPEC_FILE}}', 'specs/SHOP-7.md')
      .replaceAll('{{NOTES_FILE}}', 'specs/SHOP-7.notes.md');
    expect(text).toBe(
      `<spec_file>specs/SHOP-7.md</spec_file>\n<notes_file>specs/SHOP-7.notes.md</notes_file>\n<rubric_command>npm test</rubric_command>\n\n${filled}`,
    );
    expect(text).not.toContain('<lessons>');
    expect(text).not.toContain('<failure>');
    expect(text).not.toContain('{{');
  });

  it('adds lessons, findings and failure as blocks, in that order, before the instructions', () => {
    const input = loop({
      mode: 'fix-review',
      findings: '- [blocker] src/a.ts: a stub\n',
      failure: 'rubric failed (exit 1)\nline',
    });
    const ctx = loopPromptContext(input, source);
    ctx.lessons.push(
      { seenBefore: 'rubric failed (exit 1)\n\n  Error:   redis\tdown\n', fix: 'When X, do Y, because Z.' },
      { seenBefore: `E ${'x'.repeat(300)}`, fix: 'Start redis first.\nThen run the tests.' },
    );
    const text = renderLoopPrompt(ctx, input);
    expect(text).toContain(
      `<rubric_command>npm test</rubric_command>\n<lessons>\n- Seen before: rubric failed (exit 1) Error: redis down\n  Fix: When X, do Y, because Z.\n- Seen before: E ${'x'.repeat(238)}\n  Fix: Start redis first.\n    Then run the tests.\n</lessons>\n<review_findings>\n- [blocker] src/a.ts: a stub\n</review_findings>\n<failure>\nrubric failed (exit 1)\nline\n</failure>\n\n# Your task: act on the review`,
    );
  });

  it.each(['continue', 'retry', 'fix-review'] as const)('uses the %s prompt for that mode', (mode) => {
    expect(
      build(loop({ mode })).endsWith(
        shipped(mode).replace(
          /\{\{(\w+)\}\}/g,
          (_, k) =>
            ({
              SPEC_FILE: 'specs/SHOP-7.md',
              NOTES_FILE: 'specs/SHOP-7.notes.md',
              TICKET: 'SHOP-7',
              RUBRIC_COMMAND: 'npm test',
            })[k as 'TICKET']!,
        ),
      ),
    ).toBe(true);
  });

  it('gives beforePrompt taps the instructions, the lessons and extra sections to change', () => {
    const input = loop();
    const ctx = loopPromptContext(input, source);
    expect(ctx).toMatchObject({
      ticket: 'SHOP-7',
      loop: 1,
      mode: 'continue',
      repo: 'shop',
      recall: { mode: 'spec', query: '# SHOP-7' },
      lessons: [],
      sections: [],
    });
    ctx.lessons.push({ seenBefore: 'two', fix: 'from a plugin' });
    ctx.sections.push({ title: 'Team Notes!', body: 'be brief' });
    ctx.prompt = 'Do the thing.\n';
    expect(renderLoopPrompt(ctx, input)).toBe(
      '<spec_file>specs/SHOP-7.md</spec_file>\n<notes_file>specs/SHOP-7.notes.md</notes_file>\n<rubric_command>npm test</rubric_command>\n<lessons>\n- Seen before: two\n  Fix: from a plugin\n</lessons>\n<team_notes_>\nbe brief\n</team_notes_>\n\nDo the thing.\n',
    );
  });

  it('uses a repository override and fills its placeholders', () => {
    override(
      'retry',
      'Fix {{TICKET}}: read {{SPEC_FILE}} and {{NOTES_FILE}}, run `{{RUBRIC_COMMAND}}`. Keep {{ literal }}.\n',
    );
    const text = build(loop({ mode: 'retry', failure: 'boom', rubricCommand: 'make test $HOME' }));
    expect(
      text.endsWith(
        '\n\nFix SHOP-7: read specs/SHOP-7.md and specs/SHOP-7.notes.md, run `make test $HOME`. Keep {{ literal }}.\n',
      ),
    ).toBe(true);
    expect(loadPrompt('retry', source)).toMatchObject({ overridden: true, path: '.chalk/prompts/retry.md' });
    expect(loadPrompt('continue', source).overridden).toBe(false);
  });

  it('refuses an override with an unknown placeholder, or one its prompt does not have, naming the file', () => {
    override('continue', 'read {{SPEC}}\n');
    expect(() => build(loop())).toThrow(UserError);
    expect(() => build(loop())).toThrow(
      '.chalk/prompts/continue.md uses {{SPEC}}, an unknown placeholder; use one of {{TICKET}}, {{SPEC_FILE}}, {{NOTES_FILE}}, {{RUBRIC_COMMAND}}',
    );
    override('continue', 'diff {{BASE_REF}}\n');
    expect(() => checkPrompts(source)).toThrow('uses {{BASE_REF}}, a placeholder this prompt does not have');
    override('continue', 'fine\n');
    override('distill', 'about {{TICKET}}\n');
    expect(() => checkPrompts(source)).toThrow(
      '.chalk/prompts/distill.md uses {{TICKET}}, a placeholder this prompt does not have; it takes none',
    );
  });
});

describe('the other prompts', () => {
  it('system: the prompt, then the textbook as engineering rules', () => {
    const opts = { ticket: 'SHOP-7', rubricCommand: 'npm test' };
    expect(buildSystemPrompt(source, { ...opts, textbook: null })).toBe(shipped('system'));
    expect(buildSystemPrompt(source, { ...opts, textbook: 'Rule one.' })).toBe(
      `${shipped('system')}\n<engineering_rules>\nRule one.\n</engineering_rules>\n`,
    );
  });

  it('spec-check: the spec path, then the instructions', () => {
    expect(buildSpecCheckPrompt(source, 'SHOP-7')).toBe(
      `<spec_file>specs/SHOP-7.md</spec_file>\n\n${shipped('spec-check')}`,
    );
  });

  it('review: the spec path and the base ref', () => {
    override('review', 'Diff against {{BASE_REF}} for {{TICKET}}.\n');
    expect(buildReviewPrompt(source, { ticket: 'SHOP-7', baseBranch: 'main', rubricCommand: 'npm test' })).toBe(
      '<spec_file>specs/SHOP-7.md</spec_file>\n<base_ref>origin/main</base_ref>\n\nDiff against origin/main for SHOP-7.\n',
    );
  });

  it('distill: the failure, the note and the fix', () => {
    const text = buildDistillPrompt(source, {
      signature: 'rubric failed (exit 1)\nout',
      note: 'pin the version',
      fix: '1 commit\n',
    });
    expect(text).toBe(
      `<failure>\nrubric failed (exit 1)\nout\n</failure>\n<engineer_note>\npin the version\n</engineer_note>\n<fix_diff>\n1 commit\n</fix_diff>\n\n${shipped('distill')}`,
    );
  });

  it('breakdown: the epic', () => {
    expect(buildBreakdownPrompt(source, 'SHOP-1')).toBe(`<epic>SHOP-1</epic>\n\n${shipped('breakdown')}`);
  });
});

describe('the prompt-set hash', () => {
  const hash = (textbook: string | null = null, fpFeedback = false) => promptSetHash(source, { textbook, fpFeedback });

  it('is 8 hex digits and stable', () => {
    expect(hash()).toMatch(/^[0-9a-f]{8}$/);
    expect(hash()).toBe(hash());
  });

  it('changes with any override, the textbook or CHALK_FP_FEEDBACK', () => {
    const base = hash();
    expect(hash('rules')).not.toBe(base);
    expect(hash(null, true)).not.toBe(base);
    override('distill', shipped('distill'));
    expect(hash()).toBe(base);
    override('distill', `${shipped('distill')}\nOne more rule.\n`);
    expect(hash()).not.toBe(base);
  });

  it('reads the textbook relative to the worktree, null when missing', () => {
    expect(readTextbook(root, '.chalk/textbook.md')).toBeNull();
    mkdirSync(join(root, '.chalk'), { recursive: true });
    writeFileSync(join(root, '.chalk', 'textbook.md'), 'rules\n');
    expect(readTextbook(root, '.chalk/textbook.md')).toBe('rules\n');
    expect(readTextbook(root, '')).toBeNull();
    expect(readTextbook(null, '.chalk/textbook.md')).toBeNull();
  });
});

describe('the loop mode', () => {
  it.each([
    [2, '', 'continue'],
    [2, 'rubric failed (exit 1)', 'retry'],
    [0, '', 'fix-review'],
    [0, 'rubric failed (exit 1)', 'fix-review'],
  ] as const)('%i open, feedback %j -> %s', (open, feedback, mode) => {
    expect(loopMode(open, feedback)).toBe(mode);
  });
});
