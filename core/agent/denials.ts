import type { AgentResult } from '../ports/agent.js';

/**
 * Refused actions. A loop whose actions the CLI's permission checks refused
 * says so; at MANY_DENIALS or more the likely cause is auto mode being
 * unavailable (a gateway, or a model without it), and the run points at
 * `chalk doctor`.
 */

export const MANY_DENIALS = 3;

export const denialCount = (r: Pick<AgentResult, 'denials'>): number => r.denials.length;

/** The loop-log line when any action was refused, or undefined. */
export function denialNote(r: Pick<AgentResult, 'denials'>, resultPath: string): string | undefined {
  const n = denialCount(r);
  if (n === 0) return undefined;
  return `  ${n} action${n === 1 ? ' was' : 's were'} refused by permission checks; see ${resultPath}`;
}

/** The detention's next-step line when many actions were refused, or undefined. */
export function denialNextStep(r: Pick<AgentResult, 'denials'>): string | undefined {
  const n = denialCount(r);
  if (n < MANY_DENIALS) return undefined;
  return `${n} actions were refused in the last loop, as when auto mode is unavailable for the model; run: chalk doctor`;
}

/** The tools refused, each once, in order: `Bash, Write`. */
export function deniedTools(r: Pick<AgentResult, 'denials'>): string {
  return [...new Set(r.denials.map((d) => d.tool))].join(', ');
}
