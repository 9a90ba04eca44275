/**
 * `chalk-harness/plugin`: what a third-party plugin is written against. The Plugin contract
 * and the narrow host its `register` is handed (PluginHost), the typed context of a plugin's
 * command, the port tokens and each port's interface by name (PortTypes), every type those
 * interfaces mention, the loop hooks' event types, the key helpers a plugin declares its
 * configuration with, doctor checks and contributions, and CliForge (a forge driven through
 * its own CLI). A decider plugin also uses `chalk-harness/decider` (the protocol, its failures
 * and the shared HTTP client); a plugin that runs things on this machine `chalk-harness/host`.
 */
export type { Config, ConfigEntry, Source } from './config/config.js';
export { chosenBy, describeSetting, proposedLine, timedOutNote } from './config/limits.js';
export * from './config/schemas.js';
export type { DeclaredKey, KeyTable } from './config/table.js';
export { DECIDER_STATUS, type DeciderStatusPart } from './decision/status-part.js';
export { UserError } from './errors.js';
export type { RulesMode } from './fingerprint/streak.js';
export type { LoopEnd, Verdict } from './fingerprint/verdict.js';
export { CliForge, type ForgeCli } from './forge/cli-forge.js';
export type { CheckResult, CheckStatus, DoctorCheck } from './kernel/doctor.js';
export {
  DETENTION_KINDS,
  type DetainEvent,
  type DetentionKind,
  type GraduateEvent,
  type GraduateOutcome,
  HOOK_KINDS,
  type HookFingerprint,
  type HookKind,
  type HookName,
  type LoopHooks,
  type PrBodyContext,
  type PromptContext,
  type PromptLesson,
  type RubricEvent,
  type RunEndEvent,
  type RunEnding,
  type RunStartEvent,
  type SandboxPurpose,
  type SandboxStartEvent,
  type StopRequest,
  type VerdictEvent,
} from './kernel/hooks.js';
export {
  type ContributionPoint,
  contributionPoint,
  KernelError,
  type Offer,
  type OfferDeclaration,
  type Plugin,
  type PluginCommand,
  type PluginCommandContext,
  type PluginHost,
  type Provider,
  type SelectOptions,
  type Selector,
} from './kernel/kernel.js';
export { PORT_NAMES, type PortName, type PortTypes, Tokens } from './kernel/tokens.js';
export * from './ports/agent.js';
export type { Clock } from './ports/clock.js';
export type * from './ports/decider.js';
export type * from './ports/embedder.js';
export type * from './ports/forge.js';
export * from './ports/host-git.js';
export * from './ports/lesson-memory.js';
export type { Log } from './ports/log.js';
export * from './ports/sandbox.js';
export * from './ports/store.js';
export type { Answer, ChoiceAnswer, DecisionResponse, NoulAnswer, ScoreAnswer } from './protocol/codec.js';
export type { AdmissionLimit, DeciderEntry } from './protocol/entry.js';
export { DecisionFailure, type FailureDetail, type FailureKind } from './protocol/failure.js';
export type {
  ChoiceQuestion,
  DecisionRequest,
  NoulQuestion,
  Question,
  QuestionType,
  ScoreQuestion,
} from './protocol/questions.js';
