import type { SandboxSpec } from '../../core/plugin.js';

/** Labels every sandbox container carries, so leftovers can be found and removed. */
export const LABELS = {
  repo: 'chalk.repo',
  ticket: 'chalk.ticket',
  run: 'chalk.run',
  /** `run`, or the spec's suffix (e.g. `distill`) for a second sandbox of the same ticket. */
  kind: 'chalk.kind',
} as const;

const clean = (s: string) => s.replace(/[^A-Za-z0-9_.-]/g, '-');

/** `chalk-sandbox-<repo>-<TICKET>[-suffix]`, characters outside `[A-Za-z0-9_.-]` replaced by `-`. */
export function containerName(spec: Pick<SandboxSpec, 'repo' | 'ticket' | 'suffix'>): string {
  return clean(`chalk-sandbox-${spec.repo}-${spec.ticket}${spec.suffix ? `-${spec.suffix}` : ''}`);
}

export function labelsFor(spec: Pick<SandboxSpec, 'repo' | 'ticket' | 'runId' | 'suffix'>): Record<string, string> {
  return {
    [LABELS.repo]: spec.repo,
    [LABELS.ticket]: spec.ticket,
    [LABELS.run]: spec.runId,
    [LABELS.kind]: spec.suffix || 'run',
  };
}

/** A `docker ps` label filter for a repo's (or one ticket's) containers. */
export function labelFilter(filter: { repo: string; ticket?: string; kind?: string }): string[] {
  const f = [`${LABELS.repo}=${filter.repo}`];
  if (filter.ticket) f.push(`${LABELS.ticket}=${filter.ticket}`);
  if (filter.kind) f.push(`${LABELS.kind}=${filter.kind}`);
  return f;
}
