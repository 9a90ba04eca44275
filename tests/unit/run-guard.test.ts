import { describe, expect, it } from 'vitest';
import { forgeGuardedPaths } from '../../core/forge/select.js';
import { type GuardInput, guardLoop, hostKey, onlyTicked, REASON_NAMES, showPath } from '../../core/run/base/guard.js';
import { githubForge } from '../../plugins/forge-github/index.js';
import { gitlabForge } from '../../plugins/forge-gitlab/index.js';

/** The built-in forges' guarded paths, as depsFromKernel gathers every offered forge's. */
const FORGE_GUARDED = forgeGuardedPaths([
  { name: 'github', value: githubForge() },
  { name: 'gitlab', value: gitlabForge() },
]);

const SPEC = [
  '# SHOP-7: the cart keeps its items',
  '',
  'Context: the cart lives in `src/cart.ts`.',
  '',
  '- [ ] adding an item shows it in the cart',
  '- [ ] removing an item takes it out',
  '  - [ ] an indented checkpoint',
  '- [x] the cart starts empty',
  '',
].join('\n');

const guard = (over: Partial<GuardInput>) =>
  guardLoop({
    changed: [],
    ticket: 'SHOP-7',
    specBefore: SPEC,
    specAfter: SPEC,
    hooksDirs: [],
    forgeGuarded: FORGE_GUARDED,
    ...over,
  });

/** The spec with line `n` (1-based) replaced. */
const withLine = (spec: string, n: number, line: string) =>
  spec
    .split('\n')
    .map((l, i) => (i === n - 1 ? line : l))
    .join('\n');

describe('what a loop may change', () => {
  it.each([
    ['src/cart.ts'],
    ['specs/SHOP-7.notes.md'],
    ['specs/shop-7.NOTES.md'],
    ['.gitattributes'],
    ['.gitmodules'],
    ['.github/workflows/test.yml'],
    ['.chalkrc'],
    ['.chalk-notes/x.md'],
    ['.husky-like/readme.md'],
    ['docs/.chalk/config'],
    ['src/.husky/pre-push'],
    ['specs/OTHER-1.notes.md'],
    ['CLAUDE.md'],
  ])('%s is free', (path) => {
    expect(guard({ changed: [path] })).toEqual({ ok: true });
  });

  it.each([
    ['.chalk/config'],
    ['.chalk/textbook.md'],
    ['.chalk/prompts/loop.md'],
    ['.chalk/plugins/anything.js'],
    ['.chalk'],
    ['.husky/pre-push'],
    ['.husky/_/h'],
    ['.husky'],
    ['.githooks/pre-commit'],
    ['.github/workflows/chalk.yml'],
    ['.gitlab/chalk.gitlab-ci.yml'],
    ['.gitlab-ci.yml'],
    // An ancestor of a guarded path changed as a file, a symlink or a submodule.
    ['.github'],
    ['.github/workflows'],
    ['.gitlab'],
    ['specs'],
    // Names a case-insensitive or normalising host file system takes for a guarded one.
    ['.CHALK/config'],
    ['.Chalk/Config'],
    ['.chalk./config'],
    ['.chalk /config'],
    ['.\u200cchalk/config'],
    ['./.chalk/config'],
    ['.chalk//config'],
    ['.GITHUB/workflows/CHALK.yml'],
    ['.Husky/pre-push'],
    ['specs/shop-7.md'],
    ['specs/SHOP-7.MD'],
    ['../outside'],
  ])('%s is refused', (path) => {
    expect(guard({ changed: ['src/ok.ts', path] })).toEqual({
      ok: false,
      files: [path],
      reason: `the loop changed files the agent may not change: ${showPath(path)}`,
    });
  });

  it("refuses every offered forge's guarded paths, the CI gate files init writes among them", () => {
    expect(FORGE_GUARDED).toEqual(['.github/workflows/chalk.yml', '.gitlab/chalk.gitlab-ci.yml', '.gitlab-ci.yml']);
    for (const path of FORGE_GUARDED) expect(guard({ changed: [path] }).ok).toBe(false);
    // A forge's own paths come from the forge: a third party's are refused the same way.
    expect(guard({ changed: ['.acme/gate.yml'], forgeGuarded: ['.acme/gate.yml'] }).ok).toBe(false);
    expect(guard({ changed: ['.acme/gate.yml'] }).ok).toBe(true);
  });

  it('the paths init writes for a forge are ones its guard keeps', () => {
    for (const forge of [githubForge(), gitlabForge()]) {
      for (const f of forge.gateFiles?.() ?? []) expect(forge.guardedPaths).toContain(f.path);
    }
  });

  it.each<[string, boolean]>([
    ['docs/textbook.md', false],
    ['Docs/TextBook.md', false],
    ['docs', false],
    ['docs/other.md', true],
  ])('a textbook configured outside .chalk/ is guarded too: %s free: %s', (path, free) => {
    expect(guard({ changed: [path], gradedBy: ['docs/textbook.md'] }).ok).toBe(free);
    expect(guard({ changed: [path] }).ok).toBe(true);
  });

  it('counts a rename of .chalk/config to elsewhere as changing it', () => {
    expect(guard({ changed: ['.chalk/config', 'config.bak'] })).toEqual({
      ok: false,
      files: ['.chalk/config'],
      reason: 'the loop changed files the agent may not change: .chalk/config',
    });
  });

  it('names every refused file once, in order', () => {
    expect(guard({ changed: ['.chalk/config', 'src/a.ts', '.husky/pre-push', '.chalk/config'] })).toEqual({
      ok: false,
      files: ['.chalk/config', '.husky/pre-push'],
      reason: 'the loop changed files the agent may not change: .chalk/config, .husky/pre-push',
    });
  });

  it(`names the first ${REASON_NAMES} files and counts the rest, on one line`, () => {
    const many = Array.from({ length: REASON_NAMES + 2 }, (_, i) => `.chalk/prompts/p${i}.md`);
    const v = guard({ changed: many });
    expect(v.ok || v.files).toEqual(many);
    expect(v.ok || v.reason).toMatch(/: \.chalk\/prompts\/p0\.md, .*\.chalk\/prompts\/p9\.md and 2 more$/);
  });

  it('shows a hostile file name quoted and escaped, so the reason stays one harmless line', () => {
    const evil = '.chalk/x\n\u001b[2Jnext: all good\u202e"\\';
    const v = guard({ changed: [evil] });
    expect(v.ok || v.files).toEqual([evil]);
    expect(v.ok || v.reason).toBe(
      'the loop changed files the agent may not change: ".chalk/x\\u000a\\u001b[2Jnext: all good\\u202e\\"\\\\"',
    );
  });
});

describe('hook directories', () => {
  it.each<[string[], string, boolean]>([
    [['tools/hooks'], 'tools/hooks/pre-push', false],
    [['tools/hooks'], 'tools/hooks', false],
    [['tools/hooks'], 'tools', false],
    [['tools/hooks'], 'tools/hooks-doc.md', true],
    [['tools/hooks'], 'tools/build.sh', true],
    [['./tools/hooks/'], 'tools/hooks/pre-push', false],
    [['Tools/Hooks'], 'tools/hooks/pre-push', false],
    [['.husky/_'], '.husky/_/pre-push', false],
    // Outside the repository: not the tree's business.
    [['/etc/git-hooks'], 'etc/git-hooks/pre-push', true],
    [['../shared-hooks'], 'shared-hooks/pre-push', true],
    // The repository root as the hooks directory makes every file a possible hook.
    [['.'], 'src/cart.ts', false],
    [[''], 'src/cart.ts', false],
  ])('hooksDirs %j, %s free: %s', (hooksDirs, path, free) => {
    expect(guard({ changed: [path], hooksDirs }).ok).toBe(free);
  });
});

describe('git configuration the user includes from the tree', () => {
  it.each<[string, boolean]>([
    ['.gitconfig', false],
    ['.GitConfig', false],
    ['tools/git.conf', true],
    ['src/cart.ts', true],
  ])('configFiles [.gitconfig], %s free: %s', (path, free) => {
    expect(guard({ changed: [path], configFiles: ['.gitconfig'] }).ok).toBe(free);
  });

  it('refuses a directory the included file would be found through', () => {
    expect(guard({ changed: ['config'], configFiles: ['config/git/shared.conf'] }).ok).toBe(false);
  });
});

describe('the spec may change only by ticking checkpoints', () => {
  const crlf = SPEC.replace(/\n/g, '\r\n');
  it.each<[string, string, string]>([
    ['unchanged', SPEC, SPEC],
    ['one box ticked', SPEC, withLine(SPEC, 5, '- [x] adding an item shows it in the cart')],
    ['an upper-case X', SPEC, withLine(SPEC, 6, '- [X] removing an item takes it out')],
    [
      'every open box ticked',
      SPEC,
      withLine(
        withLine(
          withLine(SPEC, 5, '- [x] adding an item shows it in the cart'),
          6,
          '- [x] removing an item takes it out',
        ),
        7,
        '  - [x] an indented checkpoint',
      ),
    ],
    ['a tick with CRLF line endings kept', crlf, crlf.replace('- [ ] adding', '- [x] adding')],
    ['an empty spec left empty', '', ''],
    ['a `* [ ]` item ticked', withLine(SPEC, 5, '* [ ] star'), withLine(SPEC, 5, '* [x] star')],
    ['a `+ [ ]` item ticked', withLine(SPEC, 5, '+ [ ] plus'), withLine(SPEC, 5, '+ [X] plus')],
    ['a `1. [ ]` item ticked', withLine(SPEC, 5, '1. [ ] numbered'), withLine(SPEC, 5, '1. [x] numbered')],
  ])('%s: allowed', (_name, before, after) => {
    expect(onlyTicked(before, after)).toBe(true);
    expect(guard({ specBefore: before, specAfter: after, changed: ['specs/SHOP-7.md'] })).toEqual({ ok: true });
  });

  const fence = SPEC.replace(
    '- [x] the cart starts empty\n',
    '- [x] the cart starts empty\n\n```md\n- [ ] example\n```\n',
  );
  it.each<[string, string, string]>([
    ['a ticked checkpoint unticked', SPEC, withLine(SPEC, 8, '- [ ] the cart starts empty')],
    ['a checkpoint removed', SPEC, SPEC.replace('- [ ] removing an item takes it out\n', '')],
    [
      'an open checkpoint deleted and another ticked',
      SPEC,
      SPEC.replace('- [ ] removing an item takes it out\n', '').replace('- [ ] adding', '- [x] adding'),
    ],
    ['a checkpoint added', SPEC, `${SPEC}- [ ] a new checkpoint\n`],
    ['a ticked checkpoint added', SPEC, `${SPEC}- [x] already done\n`],
    ['a checkpoint reworded', SPEC, withLine(SPEC, 5, '- [ ] adding an item')],
    ['a checkpoint reworded and ticked', SPEC, withLine(SPEC, 5, '- [x] adding an item')],
    ['a checkpoint turned into prose', SPEC, withLine(SPEC, 5, 'adding an item shows it in the cart')],
    ['a checkpoint turned into a plain bullet', SPEC, withLine(SPEC, 5, '- adding an item shows it in the cart')],
    [
      'checkpoints reordered',
      SPEC,
      withLine(
        withLine(SPEC, 5, '- [ ] removing an item takes it out'),
        6,
        '- [ ] adding an item shows it in the cart',
      ),
    ],
    [
      'a ticked box moved to another line',
      SPEC,
      withLine(
        withLine(SPEC, 5, '- [ ] removing an item takes it out'),
        6,
        '- [x] adding an item shows it in the cart',
      ),
    ],
    [
      'a tick moved from one checkpoint to another',
      SPEC,
      withLine(withLine(SPEC, 6, '- [x] removing an item takes it out'), 8, '- [ ] the cart starts empty'),
    ],
    ['a checkpoint indented while ticked', SPEC, withLine(SPEC, 5, '  - [x] adding an item shows it in the cart')],
    ['a context line edited', SPEC, withLine(SPEC, 3, 'Context: anything goes.')],
    [
      'a context line edited along with a tick',
      SPEC,
      withLine(withLine(SPEC, 3, 'Context: x'), 5, '- [x] adding an item shows it in the cart'),
    ],
    ['trailing whitespace added to a tick', SPEC, withLine(SPEC, 5, '- [x] adding an item shows it in the cart ')],
    [
      'trailing whitespace added to a context line',
      SPEC,
      withLine(SPEC, 3, 'Context: the cart lives in `src/cart.ts`. '),
    ],
    ['the heading changed', SPEC, withLine(SPEC, 1, '# SHOP-7: something else')],
    ['a line added at the end', SPEC, `${SPEC}\nmore\n`],
    ['the final newline removed', SPEC, SPEC.slice(0, -1)],
    ['a byte order mark added', SPEC, `\ufeff${SPEC}`],
    ['CRLF line endings turned into LF along with a tick', crlf, SPEC.replace('- [ ] adding', '- [x] adding')],
    ['LF line endings turned into CRLF', SPEC, crlf],
    ['one line ending turned into CRLF', SPEC, SPEC.replace('takes it out\n', 'takes it out\r\n')],
    ['`- [ ]` added inside a code fence', SPEC, fence],
    ['a box inside a code fence ticked', fence, fence.replace('- [ ] example', '- [x] example')],
    ['a box inside an HTML comment ticked', `${SPEC}<!--\n- [ ] hidden\n-->\n`, `${SPEC}<!--\n- [x] hidden\n-->\n`],
    ['a box in prose ticked', withLine(SPEC, 3, 'see - [ ] here'), withLine(SPEC, 3, 'see - [x] here')],
    [
      'a second box on a checkpoint line ticked',
      withLine(SPEC, 5, '- [ ] a [ ] b'),
      withLine(SPEC, 5, '- [ ] a [x] b'),
    ],
    ['a box filled with something else', SPEC, withLine(SPEC, 5, '- [-] adding an item shows it in the cart')],
    ['a box filled with two characters', SPEC, withLine(SPEC, 5, '- [xx] adding an item shows it in the cart')],
    [
      'a tick and a second change on the same line',
      SPEC,
      withLine(SPEC, 5, '- [x] adding an item shows it in the carT'),
    ],
    ['the spec emptied', SPEC, ''],
  ])('%s: refused', (_name, before, after) => {
    expect(onlyTicked(before, after)).toBe(false);
    expect(guard({ specBefore: before, specAfter: after, changed: ['specs/SHOP-7.md'] })).toEqual({
      ok: false,
      files: ['specs/SHOP-7.md'],
      reason: 'the loop changed the spec other than by ticking checkpoints: specs/SHOP-7.md',
    });
  });

  it('judges the spec text even when the changed paths do not name it', () => {
    expect(guard({ specAfter: '', changed: ['src/a.ts'] })).toMatchObject({ ok: false, files: ['specs/SHOP-7.md'] });
  });

  it('refuses a spec that is gone or not a regular file', () => {
    expect(guard({ specAfter: null, changed: ['specs/SHOP-7.md'] })).toEqual({
      ok: false,
      files: ['specs/SHOP-7.md'],
      reason: 'the loop removed the spec or made it something other than a regular file: specs/SHOP-7.md',
    });
  });

  it('names refused files and the spec in one line', () => {
    expect(guard({ changed: ['.chalk/config', 'specs/SHOP-7.md'], specAfter: `${SPEC}- [x] done\n` })).toEqual({
      ok: false,
      files: ['.chalk/config', 'specs/SHOP-7.md'],
      reason:
        'the loop changed files the agent may not change: .chalk/config; the loop changed the spec other than by ticking checkpoints: specs/SHOP-7.md',
    });
  });
});

describe('host keys', () => {
  it.each([
    ['.chalk/config', '.chalk/config'],
    ['.CHALK/Config', '.chalk/config'],
    ['./.chalk//config/', '.chalk/config'],
    ['.chalk. /config', '.chalk/config'],
    ['\ufeff.ch\u200dalk/config', '.chalk/config'],
    ['Cafe\u0301.md', 'caf\u00e9.md'],
  ])('%j -> %j', (path, key) => {
    expect(hostKey(path)).toBe(key);
  });
});
