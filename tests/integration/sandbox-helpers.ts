import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importBundle } from '../../core/git/bundle-import.js';
import type { SandboxSession, SandboxSpec } from '../../core/ports/sandbox.js';
import { repoKey } from '../../core/repo/git.js';
import { docker } from '../../plugins/sandbox-docker/docker.js';
import { DEFAULT_IMAGE } from '../../plugins/sandbox-docker/image.js';
import { labelFilter } from '../../plugins/sandbox-docker/names.js';
import { DockerSandbox, type DockerSandboxOptions } from '../../plugins/sandbox-docker/sandbox.js';

/**
 * Shared by every test that needs a real sandbox (this half's and the agent
 * half's). In CI (CI=true) a missing Docker engine is a failure, elsewhere
 * such tests skip.
 */
export async function dockerReachable(): Promise<boolean> {
  try {
    await (await docker()).ping();
    return true;
  } catch {
    if (process.env.CI === 'true') throw new Error('CI=true but the Docker engine is not reachable');
    return false;
  }
}

/** The image the tests use; in CI .ci/setup.d/20-docker.sh has built it. */
export const TEST_IMAGE = process.env.CHALK_IMAGE || DEFAULT_IMAGE;

export function testSandbox(opts: Partial<DockerSandboxOptions> = {}): DockerSandbox {
  return new DockerSandbox({ image: TEST_IMAGE, tmpfsSize: '512m', telemetry: null, env: {}, ...opts });
}

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

export interface TestRepo {
  root: string;
  branch: string;
  /** A host directory for what comes out of the sandbox (bundles). */
  ioDir: string;
  /** The ticket branch's HEAD when the repo was made. */
  base: string;
  git(...args: string[]): string;
  /** A sandbox spec whose source is a fresh bundle of the ticket branch as it is now. */
  spec(over?: Partial<SandboxSpec>): SandboxSpec;
  dispose(): void;
}

let counter = 0;

/** A host repository with a README on main and the ticket branch `chalk/<TICKET>` checked out. */
export function makeTestRepo(ticket = 'SBX-1'): TestRepo {
  const dir = mkdtempSync(join(tmpdir(), 'chalk-sbx-'));
  const root = join(dir, `repo${process.pid}x${counter++}`);
  mkdirSync(root);
  git(root, 'init', '-q', '-b', 'main');
  git(root, 'config', 'user.name', 'Host Person');
  git(root, 'config', 'user.email', 'host@example.com');
  writeFileSync(join(root, 'README.md'), '# test repo\n');
  writeFileSync(join(root, '.gitignore'), 'node_modules/\n');
  git(root, 'add', '-A');
  git(root, 'commit', '-q', '-m', 'initial');
  const branch = `chalk/${ticket}`;
  git(root, 'checkout', '-q', '-b', branch);
  const ioDir = join(dir, 'io');
  mkdirSync(ioDir);
  // The key chalk itself files this repository under (chalk cleanup finds its containers by it).
  const repoName = repoKey(root);
  let bundles = 0;
  // A test that deleted the branch (chalk cleanup) still asks for a spec to name the container by.
  const source = () => {
    const file = join(dir, `in-${bundles++}.bundle`);
    try {
      git(root, 'bundle', 'create', '-q', file, `refs/heads/${branch}`);
    } catch {
      return join(dir, 'no-branch.bundle');
    }
    return file;
  };
  return {
    root,
    branch,
    ioDir,
    base: git(root, 'rev-parse', 'HEAD'),
    git: (...args) => git(root, ...args),
    spec: (over = {}) => ({
      repo: repoName,
      source: source(),
      ticket,
      runId: `${ticket}-${Date.now()}`,
      branch,
      author: { name: 'Host Person', email: 'host@example.com' },
      ...over,
    }),
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Names of containers labelled with this repo (and ticket). */
export async function labelledContainers(filter: { repo: string; ticket?: string }): Promise<string[]> {
  const list = await (await docker()).listContainers({ all: true, filters: { label: labelFilter(filter) } });
  return list.map((c) => (c.Names[0] ?? c.Id).replace(/^\//, ''));
}

/** The docker bridge's gateway address: where a host server must listen to be reached from a sandbox. */
export async function dockerBridgeGateway(): Promise<string> {
  const net = await (await docker()).getNetwork('bridge').inspect();
  return (net.IPAM?.Config?.[0]?.Gateway as string | undefined) ?? '172.17.0.1';
}

/** What the run loop does to take a session's commits since `base`: export to the host, import with host git. */
export async function bringHomeForTest(session: SandboxSession, repo: TestRepo, base: string): Promise<string | null> {
  const dest = join(repo.ioDir, `out-${Date.now()}-${Math.random().toString(36).slice(2)}.bundle`);
  const head = await session.exportBundle(base, dest);
  if (head === null) return null;
  const r = await importBundle({
    cwd: repo.root,
    bundle: dest,
    base,
    target: { kind: 'fast-forward', branch: repo.branch },
  });
  return r.tip;
}
