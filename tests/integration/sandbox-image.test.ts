import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { docker } from '../../plugins/sandbox-docker/docker.js';
import { extraCaBundle } from '../../plugins/sandbox-docker/image.js';
import { dockerReachable, makeTestRepo, TEST_IMAGE, testSandbox } from './sandbox-helpers.js';

/**
 * The image as the agent meets it: the pinned CLI runs, the tools are there,
 * and behind a TLS-intercepting proxy the host's extra CA is trusted by Node,
 * git and the CLI itself.
 */
const available = await dockerReachable();

/** Whether this host reaches the npm registry over https (with its own CA setup). */
async function hostReachesRegistry(): Promise<boolean> {
  try {
    const r = await fetch('https://registry.npmjs.org/', { method: 'HEAD', signal: AbortSignal.timeout(10_000) });
    return r.status < 500;
  } catch {
    return false;
  }
}
const online = available && (await hostReachesRegistry());

const pemBlocks = (text: string) =>
  text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g)?.map((b) => b.replace(/\s+/g, '')) ?? [];

// Docker steps are slow on a loaded 2-core machine: a generous per-test limit.
describe.skipIf(!available)('the sandbox image', { timeout: 180_000 }, () => {
  const sandbox = testSandbox();

  it('has the pinned claude CLI, bash >= 5.2, git, jq, rg and Node >= 18, and runs as non-root', async () => {
    const r = await sandbox.runOnce([
      'bash',
      '-c',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a bash expansion, not a template
      'claude --version; echo "${BASH_VERSINFO[0]}.${BASH_VERSINFO[1]}"; git --version; jq --version; rg --version | head -1; node -p "process.versions.node.split(\'.\')[0]"; id -u',
    ]);
    expect(r.exitCode).toBe(0);
    const [claude, bash, git, jq, rg, node, uid] = r.stdout.trim().split('\n');
    expect(claude).toBe('2.1.332 (Claude Code)');
    expect(Number(bash)).toBeGreaterThanOrEqual(5.2);
    expect(git).toMatch(/^git version /);
    expect(jq).toMatch(/^jq-/);
    expect(rg).toMatch(/^ripgrep /);
    expect(Number(node)).toBeGreaterThanOrEqual(18);
    expect(uid).not.toBe('0');
  });

  const ca = extraCaBundle();
  it.skipIf(!ca)("trusts every certificate of the host's extra CA bundle", async () => {
    const r = await sandbox.runOnce(['cat', '/etc/ssl/certs/ca-certificates.crt']);
    const inImage = new Set(pemBlocks(r.stdout));
    const fromHost = pemBlocks(readFileSync(ca as string, 'utf8'));
    expect(fromHost.length).toBeGreaterThan(0);
    expect(fromHost.filter((b) => !inImage.has(b))).toEqual([]);
  });

  it.skipIf(!online)('reaches https through the same network path as the host: Node, git and the CLI', async () => {
    const r = await sandbox.runOnce([
      'bash',
      '-c',
      'node -e \'fetch("https://registry.npmjs.org/",{method:"HEAD"}).then(r=>console.log("node",r.status),e=>console.log("node-error",e.cause?.code))\'; ' +
        'git ls-remote https://registry.npmjs.org/chalk-no-such-repo 2>&1 | head -1',
    ]);
    expect(r.stdout).toMatch(/^node [1-4]\d\d$/m);
    expect(r.stdout).not.toMatch(/certificate|SSL/i);
    // The CLI's own HTTP client: a registry is no model API, but an HTTP error proves TLS worked.
    const cli = await testSandbox({
      env: { ANTHROPIC_API_KEY: 'sk-ant-test-dummy', ANTHROPIC_BASE_URL: 'https://registry.npmjs.org' },
    }).runOnce(['claude', '-p', 'hi', '--output-format', 'json'], { timeoutMs: 90_000 });
    const result = JSON.parse(cli.stdout) as { result?: string };
    expect(result.result).toMatch(/API Error: [1-4]\d\d/);
  });

  it('a custom image without git stops at the clone with one line naming the image', async () => {
    const tag = 'chalk-sandbox:no-git-test';
    const dir = mkdtempSync(join(tmpdir(), 'chalk-nogit-'));
    writeFileSync(join(dir, 'Dockerfile'), `FROM ${TEST_IMAGE}\nUSER root\nRUN rm /usr/bin/git\nUSER chalk\n`);
    const d = await docker();
    const repo = makeTestRepo('NOG-1');
    try {
      const stream = await d.buildImage({ context: dir, src: ['Dockerfile'] }, { t: tag });
      await new Promise((resolve, reject) => d.modem.followProgress(stream, (e) => (e ? reject(e) : resolve(null))));
      const session = await testSandbox({ image: tag, handleSignals: false }).open(repo.spec());
      try {
        await expect(session.clone()).rejects.toThrow(`sandbox image '${tag}' has no git in the sandbox`);
      } finally {
        await session.stop();
      }
    } finally {
      repo.dispose();
      rmSync(dir, { recursive: true, force: true });
      await d
        .getImage(tag)
        .remove({ force: true })
        .catch(() => undefined);
    }
  });
});
