import type { InjectionToken } from 'tsyringe';
import type { Config } from '../config/config.js';
import type { Agent } from '../ports/agent.js';
import type { Clock } from '../ports/clock.js';
import type { Decider } from '../ports/decider.js';
import type { Embedder } from '../ports/embedder.js';
import type { Forge } from '../ports/forge.js';
import type { HostGit } from '../ports/host-git.js';
import type { LessonMemory } from '../ports/lesson-memory.js';
import type { Log } from '../ports/log.js';
import type { Sandbox } from '../ports/sandbox.js';
import type { Store } from '../ports/store.js';

/**
 * One explicit token per port, its name a plain string: a plugin binds or
 * replaces a port (usually with a lazy factory) without sharing a class with
 * the core, and a run resolves its ports in one place (depsFromKernel).
 * Nothing is inferred from TypeScript types.
 */
export const Tokens = {
  Sandbox: 'Sandbox' as InjectionToken<Sandbox>,
  Agent: 'Agent' as InjectionToken<Agent>,
  Forge: 'Forge' as InjectionToken<Forge>,
  Decider: 'Decider' as InjectionToken<Decider>,
  Embedder: 'Embedder' as InjectionToken<Embedder>,
  Store: 'Store' as InjectionToken<Store>,
  LessonMemory: 'LessonMemory' as InjectionToken<LessonMemory>,
  Clock: 'Clock' as InjectionToken<Clock>,
  Log: 'Log' as InjectionToken<Log>,
  /** Host git on the user's repository (core/git unless a plugin or a test binds another). */
  HostGit: 'HostGit' as InjectionToken<HostGit>,
  /** Not a port: the validated configuration of the current repository. */
  Config: 'Config' as InjectionToken<Config>,
} as const;

export type PortName = Exclude<keyof typeof Tokens, 'Config'>;

/** Each port's interface by its name: what `offer(port, ...)` must be given for that port. */
export interface PortTypes {
  Sandbox: Sandbox;
  Agent: Agent;
  Forge: Forge;
  Decider: Decider;
  Embedder: Embedder;
  Store: Store;
  LessonMemory: LessonMemory;
  Clock: Clock;
  Log: Log;
  HostGit: HostGit;
}
export const PORT_NAMES: readonly PortName[] = [
  'Sandbox',
  'Agent',
  'Forge',
  'Decider',
  'Embedder',
  'Store',
  'LessonMemory',
  'Clock',
  'Log',
  'HostGit',
];
