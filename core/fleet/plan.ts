import { planAnswer } from '../agent/schemas.js';
import type { PlanAnswer } from '../ports/agent.js';
import { TICKET_RE } from '../repo/git.js';
import { hasControlCharacter } from '../text/terminal.js';

/**
 * A fleet's plan: the epic split into workstreams, each an ordinary ticket. The shape is the
 * `plan` call's answer schema (core/agent/schemas.ts), so what Claude is asked for and what a
 * hand-written `--plan FILE` must hold are one schema. Pure: the caller reads the files and git.
 */
export type Plan = PlanAnswer;
export type Workstream = Plan['workstreams'][number];

export { planAnswer as planSchema };

/** Facts about the repository the rules need. */
export interface PlanFacts {
  /** The epic the plan is for. */
  epic: string;
  /** Tickets whose branch `chalk/TICKET` already exists, with the epic that made it (null: not a fleet's). */
  branches: ReadonlyMap<string, string | null>;
}

/** Longest title kept on one line (the spec's heading and the request's title). */
export const MAX_TITLE = 200;

/**
 * Every problem of a plan, one line each, in the order of the file (empty when it is valid):
 * at least one workstream; each a ticket key, a one-line title and at least one one-line
 * checkpoint; no ticket twice; no ticket whose branch exists unless this epic made it.
 */
export function planProblems(raw: unknown, facts: PlanFacts): string[] {
  const top = raw as { workstreams?: unknown } | null;
  if (top === null || typeof top !== 'object' || Array.isArray(top)) return ['the plan must be a JSON object'];
  if (!Array.isArray(top.workstreams)) return ['the plan needs a "workstreams" list'];
  if (top.workstreams.length === 0) return ['the plan has no workstream; give at least one'];
  const problems: string[] = [];
  const seen = new Map<string, number>();
  top.workstreams.forEach((w: unknown, i) => {
    const at = `workstream ${i + 1}`;
    if (w === null || typeof w !== 'object' || Array.isArray(w)) {
      problems.push(`${at}: must be an object with ticket, title and checkpoints`);
      return;
    }
    const ws = w as Record<string, unknown>;
    const ticket = typeof ws.ticket === 'string' ? ws.ticket : null;
    const name = ticket !== null && TICKET_RE.test(ticket) ? `${at} (${ticket})` : at;
    if (ticket === null || ticket === '') problems.push(`${at}: needs a ticket key like PROJ-123`);
    else if (!TICKET_RE.test(ticket))
      problems.push(`${at}: ticket ${JSON.stringify(ticket)} is not a ticket key; use one like PROJ-123`);
    else {
      const first = seen.get(ticket);
      if (first !== undefined) problems.push(`${name}: the ticket is also workstream ${first}; give each its own`);
      else seen.set(ticket, i + 1);
      if (ticket === facts.epic) problems.push(`${name}: the ticket is the epic itself; use its child tickets`);
      if (facts.branches.has(ticket) && facts.branches.get(ticket) !== facts.epic) {
        const by = facts.branches.get(ticket);
        problems.push(
          `${name}: branch chalk/${ticket} already exists${by ? ` (made by fleet ${by})` : ''}; pick another ticket or remove it (chalk cleanup)`,
        );
      }
    }
    if (typeof ws.title !== 'string' || ws.title.trim() === '') problems.push(`${name}: needs a title`);
    else if (hasControlCharacter(ws.title))
      problems.push(`${name}: the title must be one line without control characters`);
    else if (ws.title.length > MAX_TITLE) problems.push(`${name}: the title is longer than ${MAX_TITLE} characters`);
    if (ws.context !== undefined && typeof ws.context !== 'string') problems.push(`${name}: context must be text`);
    else if (typeof ws.context === 'string' && hasControlCharacter(ws.context.replace(/[\n\t]/g, ' ')))
      problems.push(`${name}: the context holds control characters; keep it plain text`);
    if (!Array.isArray(ws.checkpoints) || ws.checkpoints.length === 0)
      problems.push(`${name}: needs at least one checkpoint`);
    else
      ws.checkpoints.forEach((c: unknown, j) => {
        if (typeof c !== 'string' || c.trim() === '') problems.push(`${name}: checkpoint ${j + 1} is empty`);
        else if (hasControlCharacter(c))
          problems.push(`${name}: checkpoint ${j + 1} must be one line without control characters`);
      });
    for (const key of Object.keys(ws))
      if (!['ticket', 'title', 'context', 'checkpoints'].includes(key))
        problems.push(`${name}: unknown field ${JSON.stringify(key)}`);
  });
  return problems;
}

/** The plan, or its problems. A valid plan also passes the call kind's schema. */
export function validatePlan(raw: unknown, facts: PlanFacts): { plan: Plan } | { problems: string[] } {
  const problems = planProblems(raw, facts);
  if (problems.length > 0) return { problems };
  const parsed = planAnswer.safeParse(raw);
  if (!parsed.success) return { problems: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`) };
  const plan: Plan = {
    workstreams: parsed.data.workstreams.map((w) => ({
      ticket: w.ticket,
      title: w.title.trim(),
      ...(w.context?.trim() ? { context: w.context.trim() } : {}),
      checkpoints: w.checkpoints.map((c) => c.trim()),
    })),
  };
  return { plan };
}

/** The spec a workstream starts from: `# TICKET: title`, its context, its checkpoints unticked. */
export function specFromWorkstream(w: Workstream): string {
  return `# ${w.ticket}: ${w.title}

## Context
${w.context ?? ''}

## Checkpoints
${w.checkpoints.map((c) => `- [ ] ${c}`).join('\n')}
`;
}

/** The plan as rows for a table: ticket, title, checkpoints. */
export function planRows(plan: Plan): string[][] {
  return [
    ['TICKET', 'TITLE', 'CHECKPOINTS'],
    ...plan.workstreams.map((w) => [w.ticket, w.title, String(w.checkpoints.length)]),
  ];
}

/** Whether a confirmation answer means yes (`y`, `yes`, any case). */
export const confirmed = (answer: string): boolean => /^\s*y(es)?\s*$/i.test(answer);
