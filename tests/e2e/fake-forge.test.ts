import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scratchRepo, tempDir } from '../helpers/cli.js';
import { installFakeForge } from './fake-forge.js';

/** The recording gh/glab refuse what the real CLIs refuse, so a wrong call fails the e2e tests. */
describe('the fake forge CLIs', () => {
  const repo = scratchRepo();
  const origin = join(tempDir(), 'origin.git');
  spawnSync('git', ['init', '-q', '--bare', origin]);
  spawnSync('git', ['remote', 'add', 'origin', origin], { cwd: repo });
  spawnSync('git', ['push', '-q', 'origin', 'main:chalk/SHOP-1'], { cwd: repo });
  const forge = installFakeForge(tempDir());
  const call = (cli: string, args: string[], input = '') =>
    spawnSync(join(forge.binDir, cli), args, { cwd: repo, input, encoding: 'utf8' });

  it('gh pr create: accepts the flags gh has, reads the body from stdin, prints the URL', () => {
    const args = ['pr', 'create', '--head', 'chalk/SHOP-1', '--base', 'main', '--title', 'T', '--body-file', '-'];
    const r = call('gh', args, 'the body');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim()).toMatch(/^https:\/\/github\.com\/.+\/pull\/\d+$/);
    expect(forge.requests().at(-1)).toMatchObject({ cli: 'gh', argv: args, stdin: 'the body', problems: [] });
  });

  it('gh pr create: refuses an unknown flag, a missing body and an unpushed head', () => {
    expect(
      call('gh', ['pr', 'create', '--head', 'chalk/SHOP-1', '--base', 'main', '--title', 'T', '--bodyy', 'x']).stderr,
    ).toContain('unknown flag: --bodyy');
    expect(call('gh', ['pr', 'create', '--head', 'chalk/SHOP-1', '--base', 'main', '--title', 'T']).stderr).toContain(
      'must provide --title and --body',
    );
    const r = call('gh', ['pr', 'create', '--head', 'chalk/NOPE-1', '--base', 'main', '--title', 'T', '--body', 'b']);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('was not pushed to origin');
  });

  it('glab mr create: needs --yes and names the branches, takes the description as a value', () => {
    const ok = call('glab', [
      'mr',
      'create',
      '--yes',
      '--source-branch',
      'chalk/SHOP-1',
      '--target-branch',
      'main',
      '--title',
      'T',
      '--description',
      'd',
    ]);
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stdout).toContain('/-/merge_requests/');
    const noYes = call('glab', [
      'mr',
      'create',
      '--source-branch',
      'chalk/SHOP-1',
      '--target-branch',
      'main',
      '--title',
      'T',
    ]);
    expect(noYes.stderr).toContain('--yes is needed');
    expect(call('glab', ['mr', 'create', '--head', 'x']).stderr).toContain('unknown flag: --head');
  });

  it('answers --version and auth status like the real CLIs', () => {
    expect(call('gh', ['--version']).stdout).toMatch(/^gh version /);
    expect(call('glab', ['auth', 'status']).status).toBe(0);
  });
});
