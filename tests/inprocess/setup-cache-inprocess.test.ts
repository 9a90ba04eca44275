import { readdirSync, rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { setupCacheDir } from '../../core/layout.js';
import type { LoopKind } from '../../core/ports/agent.js';
import { repoKey } from '../../core/repo/git.js';
import type { AgentStep } from '../../core/testing/index.js';
import {
  createTestKernel,
  makeTicketRepo,
  removeTicketRepos,
  runTicket,
  ScriptedAgent,
  type TicketRepo,
} from '../../core/testing/index.js';
import { tempDir } from '../helpers/cli.js';

/**
 * The setup cache through the testing kernel (real host git, the sandbox scripts in a
 * temporary directory): a second ticket starts from what the first one's setup left,
 * never from what its agent changed; another repository with the same name, lockfile
 * and command never shares it; a branch with more than its spec saves nothing.
 */

afterEach(removeTicketRepos);

const spec = (key: string) => `# ${key}: done\n\n- [ ] write done.txt\n`;
const ticked = (key: string) => `# ${key}: done\n\n- [x] write done.txt\n`;

/** The setup: a dependency, a count of its runs, a home cache. `dep` is what it installs. */
const setupScript = (dep: string) =>
  `mkdir -p node_modules/left ~/.cache/tool && echo ${dep} > node_modules/left/index.js && echo ran >> node_modules/.runs && echo c > ~/.cache/tool/x\n`;

function shop(o: { dep?: string; state?: string; review?: boolean } = {}): TicketRepo {
  return makeTicketRepo({
    prefix: 'chalk-inproc-repo-',
    files: {
      '.gitignore': 'node_modules/\n',
      'package-lock.json': '{"lockfileVersion": 3}\n',
      'setup.sh': setupScript(o.dep ?? 'orig'),
      // The rubric needs the dependency, as a real one would.
      'test.sh': 'test -f node_modules/left/index.js && test -f done.txt\n',
    },
    env: {
      // The rubric fails before any loop by design (no done.txt): the base check has tests of its own.
      CHALK_BASELINE: 'off',
      CHALK_SETUP_CMD: 'bash setup.sh',
      CHALK_TEST_CMD: 'bash test.sh',
      CHALK_REVIEW: o.review ? 'true' : 'false',
    },
    ...(o.state ? { state: o.state } : {}),
  });
}

/** A loop that reports what it found into `seen`, optionally tampers, then does the work. */
const loop =
  (key: string, seen: string[], tamper = false): AgentStep<LoopKind> =>
  async (c) => {
    const r = await c.exec(
      'cat node_modules/left/index.js; wc -l < node_modules/.runs; ls node_modules; cat ~/.cache/tool/x',
    );
    seen.push(r.stdout.trim().replace(/\s+/g, ' '));
    if (tamper) await c.exec('echo evil > node_modules/left/index.js && touch node_modules/planted');
    await c.write('done.txt', 'ok\n');
    await c.write(`specs/${key}.md`, ticked(key));
    return { answer: { status: 'done', summary: 'done' } };
  };

async function runOn(repo: TicketRepo, agent: ScriptedAgent) {
  const t = await createTestKernel({ root: repo.root, env: repo.env, agent });
  const r = await runTicket(t.deps(), { root: repo.root });
  expect(r.exitCode, t.log.text()).toBe(0);
  return t.log.text();
}

const entries = (repo: TicketRepo) => {
  try {
    return readdirSync(setupCacheDir(repoKey(repo.root), repo.env)).filter((n) => n.endsWith('.tar'));
  } catch {
    return [];
  }
};

describe('the setup cache in-process', { timeout: 30_000 }, () => {
  it('restores the first setup into the second ticket and its review, without the first agent’s tampering', async () => {
    const repo = shop({ review: true });
    const seen: string[] = [];
    const reviewSaw: string[] = [];
    const review: AgentStep<'review'> = async (c) => {
      reviewSaw.push((await c.exec('cat node_modules/left/index.js')).stdout.trim());
      return { answer: { verdict: 'pass', summary: 'ok', findings: [] } };
    };
    repo.ticket('SHOP-1', spec('SHOP-1'));
    const first = await runOn(
      repo,
      new ScriptedAgent().script('continue', loop('SHOP-1', seen, true)).script('review', review),
    );
    expect(first).toContain('running the setup command: bash setup.sh');
    expect(first).toMatch(/setup state saved for this repository's next sandboxes \(\d/);
    expect(entries(repo)).toHaveLength(1);

    repo.ticket('SHOP-2', spec('SHOP-2'));
    const second = await runOn(
      repo,
      new ScriptedAgent().script('continue', loop('SHOP-2', seen)).script('review', review),
    );
    expect(second).not.toContain('running the setup command');
    expect(second).toMatch(/setup restored from the state saved .*; the setup command was not run/);
    // What the setup left, run once: not the first agent's `evil`, not its planted file.
    expect(seen).toEqual(['orig 1 left c', 'orig 1 left c']);
    // The first review saw the cache (restored, not the run's tampered sandbox); so did the second.
    expect(reviewSaw).toEqual(['orig', 'orig']);
    expect(entries(repo)).toHaveLength(1);
  });

  it('never gives one repository the state another one saved, same name, lockfile and command', async () => {
    const state = tempDir('chalk-inproc-state-');
    const attacker = shop({ dep: 'evil', state });
    const victim = shop({ state });
    attacker.ticket('SHOP-1', spec('SHOP-1'));
    const seen: string[] = [];
    await runOn(attacker, new ScriptedAgent().script('continue', loop('SHOP-1', seen)));
    expect(entries(attacker)).toHaveLength(1);
    victim.ticket('SHOP-1', spec('SHOP-1'));
    const log = await runOn(victim, new ScriptedAgent().script('continue', loop('SHOP-1', seen)));
    expect(log).toContain('running the setup command: bash setup.sh');
    expect(seen).toEqual(['evil 1 left c', 'orig 1 left c']);
    rmSync(state, { recursive: true, force: true });
  });

  it('saves nothing from a branch that holds more than its spec', async () => {
    const repo = shop();
    repo.ticket('SHOP-1', spec('SHOP-1'));
    // A commit beyond the spec (the agent's, a person's): its tree is no base branch's.
    repo.git('commit', '--quiet', '--allow-empty', '-m', 'empty');
    repo.git('rm', '--quiet', 'package-lock.json');
    repo.git('commit', '--quiet', '-m', 'no lockfile');
    const seen: string[] = [];
    const log = await runOn(repo, new ScriptedAgent().script('continue', loop('SHOP-1', seen)));
    expect(log).toContain('running the setup command: bash setup.sh');
    expect(log).not.toContain('setup state saved');
    expect(entries(repo)).toEqual([]);
  });
});
