/**
 * `chalk-harness/plugin`: what a third-party plugin is written against. The
 * Plugin contract and the Kernel it registers on, the port tokens, every port's
 * interface, the loop hooks' event types, the key helpers a plugin declares its
 * configuration with, and CliForge (a forge driven through its own CLI).
 */
export type { Config, ConfigEntry } from './config/config.js';
export { type KeyScope, type KeySpec, machineKey, repoKey } from './config/schemas.js';
export { UserError } from './errors.js';
export { CliForge, type ForgeCli } from './forge/cli-forge.js';
export type { CheckResult, CheckStatus, DoctorCheck } from './kernel/doctor.js';
export type {
  DetainEvent,
  GraduateEvent,
  LoopHooks,
  PrBodyContext,
  PromptContext,
  PromptLesson,
  RubricEvent,
  SandboxStartEvent,
  StopRequest,
  VerdictEvent,
} from './kernel/hooks.js';
export {
  Kernel,
  KernelError,
  type Plugin,
  type PluginCommand,
  type Provider,
  type SelectOptions,
  type Selector,
} from './kernel/kernel.js';
export { PORT_NAMES, type PortName, Tokens } from './kernel/tokens.js';
export type * from './ports/agent.js';
export type { Clock } from './ports/clock.js';
export type * from './ports/decider.js';
export type * from './ports/embedder.js';
export type * from './ports/forge.js';
export { BundleImportError, type BundleTarget, type HostGit } from './ports/host-git.js';
export type * from './ports/lesson-memory.js';
export type { Log } from './ports/log.js';
export {
  type ExecOptions,
  type ExecResult,
  SANDBOX_PATHS,
  type Sandbox,
  SandboxFileError,
  type SandboxSession,
  type SandboxSpec,
} from './ports/sandbox.js';
export type * from './ports/store.js';
