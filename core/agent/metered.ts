import type { AgentResult } from '../ports/agent.js';
import type { MeteredUsage } from '../ports/sandbox.js';

/**
 * A call's result with the spend the sandbox's gateway counted in place of what the CLI
 * printed: the cost, the tokens and the model come from the model's own responses, which no
 * process in the sandbox can touch. A call the gateway stopped at its cap ended on the budget,
 * whatever the CLI said. A call whose CLI wrote no result of its own (killed, timed out, cut
 * off: `costUnknown`) may have had a response in flight the gateway never saw end, so it stays
 * counted at its cap (`result.costUsd`), or at the gateway's count when that is more.
 */
export function withMetered<A>(result: AgentResult<A>, m: MeteredUsage): AgentResult<A> {
  return {
    ...result,
    costUsd: result.costUnknown ? Math.max(result.costUsd, m.costUsd) : m.costUsd,
    usage: {
      inputTokens: m.inputTokens,
      outputTokens: m.outputTokens,
      cacheReadTokens: m.cacheReadTokens,
      cacheCreationTokens: m.cacheCreationTokens,
      turns: result.usage.turns,
    },
    model: m.model || result.model,
    status: m.refusedOverCap > 0 ? 'error_max_budget_usd' : result.status,
  };
}
