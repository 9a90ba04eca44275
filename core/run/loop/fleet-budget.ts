import { readFileSync } from 'node:fs';
import { planPath } from '../../layout.js';
import { ticketKeyIn } from '../../repo/git.js';
import { reasons } from '../base/detention-reasons.js';
import type { Run } from '../base/run.js';
import type { DetainInput } from '../endings/detention.js';

/**
 * A fleet's spend ceiling as the run loop sees it, between loops: a ticket a fleet made
 * (its run directory names the epic) stops into detention before a call that could take the
 * fleet's recorded spend past `CHALK_FLEET_BUDGET_USD`, each call being capped at
 * `CHALK_BUDGET_USD`. The supervisor's rule for starting runs is core/fleet/budget.ts.
 */

/** Whether one more call fits: the recorded spend plus one call's cap stays within the ceiling. */
export function mayCallAgain(o: { ceilingUsd: number; spentUsd: number; budgetUsd: number }): boolean {
  return o.spentUsd + o.budgetUsd <= o.ceilingUsd + 1e-9;
}

function readOr(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/** The epic and its tickets when a fleet made this ticket, else null. */
function fleetOf(run: Pick<Run, 'ctx' | 'deps'>): { epic: string; tickets: Set<string> } | null {
  const epic = ticketKeyIn(run.ctx.paths.fleet);
  if (epic === null) return null;
  try {
    const plan = JSON.parse(readOr(planPath(run.ctx.repo, epic, run.deps.env))) as {
      workstreams?: { ticket?: unknown }[];
    };
    const tickets = new Set((plan.workstreams ?? []).map((w) => String(w.ticket)));
    tickets.add(run.ctx.ticket);
    return { epic, tickets };
  } catch {
    return { epic, tickets: new Set([run.ctx.ticket]) };
  }
}

/**
 * The detention to stop into before the next call, or null to go on. With every checkpoint
 * ticked (`open` 0) and the review off, no call comes before graduation: nothing to check.
 */
export async function fleetBudgetStop(
  run: Pick<Run, 'ctx' | 'deps' | 'log'>,
  open: number,
): Promise<DetainInput | null> {
  const ceiling = run.deps.config.str('CHALK_FLEET_BUDGET_USD');
  if (ceiling === '') return null;
  if (open === 0 && !run.deps.config.bool('CHALK_REVIEW')) return null;
  const fleet = fleetOf(run);
  if (!fleet) return null;
  let spentUsd: number;
  try {
    const rows = await run.deps.store.tickets.summaries(run.ctx.repo);
    spentUsd = rows.filter((r) => fleet.tickets.has(r.ticket)).reduce((s, r) => s + r.costUsd, 0);
  } catch (err) {
    // The ceiling cannot be checked: go on (the supervisor starts nothing it cannot afford).
    run.log.warn(`could not read the fleet's spend: ${err instanceof Error ? err.message : String(err)}`);
    return null;
  }
  const ceilingUsd = Number(ceiling);
  if (mayCallAgain({ ceilingUsd, spentUsd, budgetUsd: run.deps.config.num('CHALK_BUDGET_USD') })) return null;
  return { kind: 'fleet_budget', reason: reasons.fleetBudget(fleet.epic, spentUsd, ceilingUsd), detail: '' };
}
