import { spawn } from 'node:child_process';
import type { AgentHost } from '../ports/agent.js';
import type { ExecOptions, ExecResult } from '../ports/sandbox.js';

/**
 * Runs the CLI on the host (fleet planning, where the user's MCP servers are
 * available) with the same surface as a sandbox session.
 */
export const hostAgentHost: AgentHost = {
  exec(command: string, opts: ExecOptions = {}): Promise<ExecResult> {
    return new Promise((resolve, reject) => {
      const child = spawn('sh', ['-c', command], {
        cwd: opts.cwd,
        env: { ...process.env, ...opts.env },
        stdio: ['pipe', 'pipe', 'pipe'],
        signal: opts.signal,
        killSignal: 'SIGTERM',
      });
      let stdout = '';
      let stderr = '';
      let timedOut = false;
      const timer = opts.timeoutMs
        ? setTimeout(() => {
            timedOut = true;
            child.kill('SIGTERM');
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
      child.on('error', (err: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        if (err.name === 'AbortError') reject(err);
        else resolve({ exitCode: err.code === 'ENOENT' ? 127 : 1, stdout, stderr: stderr || err.message, timedOut });
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        if (opts.signal?.aborted) return;
        resolve({ exitCode: code ?? (signal === 'SIGKILL' ? 137 : 143), stdout, stderr, timedOut });
      });
      child.stdin.on('error', () => {});
      child.stdin.end(opts.stdin ?? '');
    });
  },
};
