import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentHost, OneShotRunner } from '../../core/ports/agent.js';
import type { ExecOptions, ExecResult } from '../../core/ports/sandbox.js';
import { run, runOk } from '../../core/process/run.js';

/**
 * A bare container of the sandbox image for the agent tests: the real
 * `claude` CLI, a git repository in /work/repo and an io directory at /chalk,
 * reaching the fake model through host.docker.internal. Credentials go in by
 * name (`-e NAME`, value from the environment), never on a command line.
 */

export const IMAGE = process.env.CHALK_IMAGE || 'chalk-sandbox:local';

export async function imagePresent(): Promise<boolean> {
  return (await run('docker', ['image', 'inspect', IMAGE])).code === 0;
}

export async function dockerUp(): Promise<boolean> {
  return (await run('docker', ['info', '--format', '{{.ServerVersion}}'], { timeoutMs: 10_000 })).code === 0;
}

/** Runs `docker <args>` with stdin, a signal, streamed output and the exit code. */
function docker(args: string[], opts: ExecOptions, env: NodeJS.ProcessEnv = process.env): Promise<ExecResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('docker', args, { env, stdio: ['pipe', 'pipe', 'pipe'], signal: opts.signal });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const timer = opts.timeoutMs
      ? setTimeout(() => {
          timedOut = true;
          child.kill('SIGKILL');
        }, opts.timeoutMs)
      : undefined;
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      opts.onOutput?.(d, 'stdout');
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      opts.onOutput?.(d, 'stderr');
    });
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ exitCode: code ?? 137, stdout, stderr, timedOut });
    });
    child.stdin.on('error', () => {});
    child.stdin.end(opts.stdin ?? '');
  });
}

export interface TestContainer extends AgentHost, OneShotRunner {
  readonly name: string;
  readonly ioDir: string;
  /** Runs a shell command in /work/repo and returns its stdout (throws on failure). */
  sh(command: string): Promise<string>;
  remove(): Promise<void>;
}

export async function startContainer(baseUrl: string): Promise<TestContainer> {
  const name = `chalk-agent-test-${process.pid}-${Date.now()}`;
  const ioDir = mkdtempSync(join(tmpdir(), 'chalk-agent-io-'));
  // The container's user (not root) must read the io directory.
  chmodSync(ioDir, 0o755);
  writeFileSync(join(ioDir, 'system.md'), 'You are a scripted test agent.\n', { mode: 0o644 });
  const env = { ...process.env, ANTHROPIC_BASE_URL: baseUrl, ANTHROPIC_API_KEY: 'sk-ant-test-dummy' };
  const credentialFlags = ['-e', 'ANTHROPIC_BASE_URL', '-e', 'ANTHROPIC_API_KEY'];
  const common = [
    '--add-host',
    'host.docker.internal:host-gateway',
    '--cap-drop',
    'ALL',
    '--security-opt',
    'no-new-privileges',
    ...credentialFlags,
  ];
  await runOk(
    'docker',
    [
      'run',
      '-d',
      '--name',
      name,
      '--label',
      'chalk.test=agent',
      ...common,
      '-v',
      `${ioDir}:/chalk:ro`,
      IMAGE,
      'sleep',
      'infinity',
    ],
    { env },
  );
  const exec = (command: string, opts: ExecOptions = {}) =>
    docker(['exec', '-i', '-w', opts.cwd ?? '/work/repo', name, 'sh', '-c', command], opts);
  const setup = await docker(
    [
      'exec',
      name,
      'sh',
      '-c',
      'mkdir -p /work/repo && cd /work/repo && git init -q && printf "hello\\n" > greeting.txt && git add . && git -c user.email=t@t -c user.name=t commit -qm init',
    ],
    {},
  );
  if (setup.exitCode !== 0) throw new Error(`container setup failed: ${setup.stderr}`);
  return {
    name,
    ioDir,
    exec,
    async sh(command) {
      const r = await exec(command);
      if (r.exitCode !== 0) throw new Error(`${command} failed: ${r.stderr}`);
      return r.stdout;
    },
    runOnce(argv, opts) {
      return docker(
        ['run', '--rm', '-i', ...common, '--entrypoint', argv[0] as string, IMAGE, ...argv.slice(1)],
        opts,
        env,
      );
    },
    async remove() {
      await run('docker', ['rm', '-f', name]);
    },
  };
}
