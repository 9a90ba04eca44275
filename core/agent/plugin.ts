import type { Plugin } from '../kernel/kernel.js';
import { Tokens } from '../kernel/tokens.js';
import { isOneShotRunner } from '../ports/agent.js';
import { ClaudeAgent } from './driver.js';
import { startModeCheck } from './start-mode.js';

/** The core's Agent: the `claude` CLI driver, and the doctor's auto-mode probe. */
export const agentPlugin: Plugin = {
  name: 'core-agent',
  register(kernel) {
    kernel.bind(Tokens.Agent, { useFactory: () => ClaudeAgent.fromConfig(kernel.config) });
    kernel.checks.push(
      startModeCheck(kernel.config, () => {
        if (!kernel.has(Tokens.Sandbox)) return undefined;
        try {
          const sandbox = kernel.resolve(Tokens.Sandbox);
          return isOneShotRunner(sandbox) ? sandbox : undefined;
        } catch {
          return undefined;
        }
      }),
    );
  },
};
