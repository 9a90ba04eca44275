/**
 * `chalk-harness/testing`: the core run with local fakes for every port, so a
 * plugin's or the core's tests drive `runTicket` with no container engine.
 */

export { type RunResult, type RunTicketOptions, runTicket } from '../run/index.js';
export {
  type AgentStep,
  type AgentStepContext,
  type AgentStepResult,
  ScriptedAgent,
  type ScriptedCall,
} from './agent.js';
export { ManualClock } from './clock.js';
export { RecordingForge } from './forge.js';
export { createTestKernel, type TestKernel, type TestKernelOptions } from './kernel.js';
export { CollectingLog, type LogLine } from './log.js';
export { isolatedGit, makeTicketRepo, removeTicketRepos, type TicketRepo, type TicketRepoOptions } from './repo.js';
export { TempSandbox, type TempSandboxOptions, TempSandboxSession } from './sandbox.js';
export { type CallRow, type DecisionRow, type EventRow, MemoryStore } from './store.js';
