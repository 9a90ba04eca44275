import { spawn } from 'node:child_process';
import type { AgentHost } from '../ports/agent.js';
import type { ExecOptions, ExecResult } from '../ports/sandbox.js';

/**
 * Runs the CLI on the host (fleet planning, where the user's MCP servers are
 * available) with the same surface as a sandbox session. The command runs in
 * its own process group, so a timeout or an abort ends everything it started.
 */
export const hostAgentHost: AgentHost = {
  exec(command: string, opts: ExecOptions = {}): Promise<ExecResult> {
    return new Promise((resolve, reject) => {
      if (opts.signal?.aborted) return reject(opts.signal.reason);
      const child = spawn('sh', ['-c', command], {
        cwd: opts.cwd,
        env: { ...process.env, ...opts.env },
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true,
      });
      const killGroup = () => {
        try {
          if (child.pid) process.kill(-child.pid, 'SIGTERM');
        } catch {}
      };
      let stdout = '';
      let stderr = '';
      let timedOut = false;
      const timer = opts.timeoutMs
        ? setTimeout(() => {
            timedOut = true;
            killGroup();
          }, opts.timeoutMs)
        : undefined;
      const onAbort = () => killGroup();
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        stdout += d;
        opts.onOutput?.(d, 'stdout');
      });
      child.stderr.setEncoding('utf8').on('data', (d: string) => {
        stderr += d;
        opts.onOutput?.(d, 'stderr');
      });
      const done = () => {
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
      };
      child.on('error', (err: NodeJS.ErrnoException) => {
        done();
        resolve({ exitCode: err.code === 'ENOENT' ? 127 : 1, stdout, stderr: stderr || err.message, timedOut });
      });
      child.on('close', (code, signal) => {
        done();
        if (opts.signal?.aborted) return reject(opts.signal.reason);
        resolve({ exitCode: code ?? (signal === 'SIGKILL' ? 137 : 143), stdout, stderr, timedOut });
      });
      child.stdin.on('error', () => {});
      child.stdin.end(opts.stdin ?? '');
    });
  },
};
