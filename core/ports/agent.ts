/**
 * The coding agent (the `claude` CLI) as the loop sees it. The sandbox-and-agent
 * issue (core/agent) refines this interface.
 */
export type CallKind = 'continue' | 'retry' | 'fix-review' | 'spec-check' | 'review' | 'distill' | 'plan';

export interface AgentResult<A = unknown> {
  answer: A | 'none';
  status: string;
  costUsd: number;
}

export interface Agent {
  call<A>(kind: CallKind, prompt: string, opts: { signal?: AbortSignal }): Promise<AgentResult<A>>;
}
