import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chalk, scratchRepo, tempDir } from '../helpers/cli.js';

/**
 * `chalk egress` and its trust commands, run as a person would: a repository's `.chalk/config`
 * may ask for hosts, which stay closed until this machine acknowledges them; a change to what it
 * asks for is asked again, and `untrust` takes the acknowledgement back.
 */
describe('chalk egress', () => {
  const state = tempDir('chalk-egress-state-');
  const env = { XDG_STATE_HOME: state };
  const withHosts = (hosts: string) => {
    const repo = scratchRepo();
    mkdirSync(join(repo, '.chalk'), { recursive: true });
    writeFileSync(join(repo, '.chalk', 'config'), `CHALK_TEST_CMD=true\nCHALK_EGRESS_HOSTS=${hosts}\n`);
    return repo;
  };

  it("shows the registries, keeps the repository's hosts closed until trusted, and asks again when they change", () => {
    const repo = withHosts('pkg.example.com:443');
    const show = (cwd = repo) => chalk(['egress'], { cwd, env });
    const first = show();
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('CHALK_EGRESS=registries (the default)');
    expect(first.stdout).toContain('  npm: registry.npmjs.org:443');
    expect(first.stdout).toContain(
      "repository's hosts (CHALK_EGRESS_HOSTS), NOT trusted (closed): pkg.example.com:443; review, then run: chalk egress trust",
    );

    const trust = chalk(['egress', 'trust'], { cwd: repo, env });
    expect(trust).toMatchObject({ code: 0, stdout: 'trusted on this machine: pkg.example.com:443\n' });
    expect(chalk(['egress', 'trust'], { cwd: repo, env }).stdout).toBe('already trusted: pkg.example.com:443\n');
    expect(show().stdout).toContain("repository's hosts (CHALK_EGRESS_HOSTS), trusted: pkg.example.com:443\n");
    // The record is the person's alone.
    expect(statSync(join(state, 'chalk', 'egress', 'trusted.json')).mode & 0o777).toBe(0o600);

    // The repository asks for one more host: that one is closed until trusted again.
    writeFileSync(
      join(repo, '.chalk', 'config'),
      'CHALK_TEST_CMD=true\nCHALK_EGRESS_HOSTS=pkg.example.com:443,evil.example:443\n',
    );
    const changed = show().stdout;
    expect(changed).toContain('trusted: pkg.example.com:443\n');
    expect(changed).toContain('NOT trusted (closed): evil.example:443;');

    expect(chalk(['egress', 'untrust'], { cwd: repo, env })).toMatchObject({
      code: 0,
      stdout: 'no longer trusted: pkg.example.com:443\n',
    });
    expect(show().stdout).toContain('NOT trusted (closed): pkg.example.com:443, evil.example:443;');
    expect(chalk(['egress', 'untrust'], { cwd: repo, env }).stdout).toBe('nothing was trusted for this repository\n');
  });

  it('a damaged trust record is one line naming it and what to run, and outside a repository trust refuses', () => {
    const repo = withHosts('pkg.example.com:443');
    const own = tempDir('chalk-egress-damaged-');
    mkdirSync(join(own, 'chalk', 'egress'), { recursive: true });
    writeFileSync(join(own, 'chalk', 'egress', 'trusted.json'), '{"version": 2}');
    const r = chalk(['egress'], { cwd: repo, env: { XDG_STATE_HOME: own } });
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toEqual([
      `chalk: ${join(own, 'chalk', 'egress', 'trusted.json')} is not an egress trust record; delete it and run chalk egress trust again`,
    ]);
    const outside = chalk(['egress', 'trust'], { cwd: tempDir('chalk-egress-outside-'), env });
    expect(outside.code).toBe(1);
    expect(outside.stderr).toContain('chalk egress trust runs inside a git repository: cd into one');
  });
});
