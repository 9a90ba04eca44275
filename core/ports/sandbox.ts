/**
 * A disposable place where an agent works: a private clone on a RAM disk that
 * hands back only git commits. The sandbox issue (plugins/sandbox-docker)
 * refines this interface.
 */
export interface ExecOptions {
  timeoutMs?: number;
  env?: Record<string, string>;
  cwd?: string;
  stdin?: string;
  onOutput?: (chunk: string, stream: 'stdout' | 'stderr') => void;
  signal?: AbortSignal;
}

export interface ExecResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

export interface SandboxSpec {
  repo: string;
  repoRoot: string;
  ticket: string;
  runId: string;
  branch: string;
  ioDir: string;
}

export interface SandboxSession {
  readonly name: string;
  exec(command: string, opts?: ExecOptions): Promise<ExecResult>;
  stop(): Promise<void>;
}

export interface Sandbox {
  open(spec: SandboxSpec): Promise<SandboxSession>;
}
