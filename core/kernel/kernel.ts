import 'reflect-metadata';
import type { BaseContext, CommandClass } from 'clipanion';
import { type DependencyContainer, type InjectionToken, container as rootContainer } from 'tsyringe';
import type { Config } from '../config/config.js';
import type { KeySpec } from '../config/schemas.js';
import { UserError } from '../errors.js';
import { hostGitPort } from '../git/port.js';
import type { Log } from '../ports/log.js';
import type { DoctorCheck } from './doctor.js';
import { createHooks, type LoopHooks } from './hooks.js';
import { SystemClock } from './system-clock.js';
import { type PortName, type PortTypes, Tokens } from './tokens.js';

/**
 * A command a plugin adds to the CLI, loaded only when its words are given. `load` is handed
 * Chalk's own clipanion module, so the command is built on the Command class the CLI runs.
 */
export interface PluginCommand {
  /** The words that select the command, e.g. ['acme', 'sync']; a built-in command's words are refused. */
  path: string[];
  /** The usage line `chalk help` shows. */
  usage: string;
  /** The `chalk help` group; default 'Plugins'. */
  group?: string;
  load(
    clipanion: typeof import('clipanion'),
  ): Promise<CommandClass<PluginCommandContext>> | CommandClass<PluginCommandContext>;
}

/**
 * What a plugin's command finds in `this.context` beside clipanion's streams: declare the command
 * as `class X extends Command<PluginCommandContext>`.
 */
export interface PluginCommandContext extends BaseContext {
  /** The configuration, every plugin's keys included. */
  config: Config;
  /** The repository root, or null outside a repository. */
  root: string | null;
  /** Boots a kernel (every plugin registered, the ports selected) for a command that needs the ports. */
  kernel(): Promise<PluginHost>;
}

/**
 * A plugin: what it adds (configuration keys, commands) declared up front, and `register`,
 * which binds implementations to ports, offers them for selection, taps hooks and adds
 * doctor checks. Its keys join the kernel's key table before any plugin registers.
 */
export interface Plugin {
  name: string;
  configuration?: readonly KeySpec[];
  commands?: readonly PluginCommand[];
  register(host: PluginHost): void | Promise<void>;
}

export type Provider<T> =
  | { useValue: T }
  | { useFactory: (c: DependencyContainer) => T }
  | { useClass: new (...args: never[]) => T };

/** What a provider declares when it is offered, for the port's selector to read. */
export interface OfferDeclaration {
  /**
   * Whether this offer fits the configuration when the choice is left to Chalk (e.g.
   * CHALK_DECIDER_PROVIDER=auto): the decider selector binds the last-offered one that fits,
   * so a later plugin's offer is preferred, as a later binding replaces an earlier one.
   */
  auto?(config: Config): boolean;
}

/** One offer as a selector sees it: its name and its declaration, in the order offered. */
export interface Offer extends OfferDeclaration {
  readonly name: string;
}

/**
 * Picks one named implementation of a port from the configuration (e.g. CHALK_FORGE=auto);
 * null binds nothing (no offer fits, and the port is optional). `offers` carries each offer's
 * declaration, in the order offered.
 */
export type Selector = (
  config: Config,
  offered: string[],
  offers: readonly Offer[],
) => string | null | Promise<string | null>;

/**
 * A named list plugins add to and one part of Chalk reads (e.g. the parts of `chalk decider
 * status`): the part that reads it declares the point, so the kernel names none.
 */
export interface ContributionPoint<T> {
  readonly id: string;
  /** Never set: carries the type of what is contributed. */
  readonly __contributes?: T;
}

export function contributionPoint<T>(id: string): ContributionPoint<T> {
  return { id };
}

/**
 * What a plugin's `register` is handed: the narrow face of the kernel. Bind or offer a port's
 * implementation (typed by the port), declare how a port is selected, tap the loop hooks, add
 * doctor checks and contributions, and resolve what is bound.
 */
export interface PluginHost {
  readonly config: Config;
  readonly log: Log;
  readonly hooks: LoopHooks;
  /** `chalk doctor` checks, in order: push your own. */
  readonly checks: DoctorCheck[];
  /** The names of the plugins registered so far. */
  readonly plugins: readonly string[];
  /** Which offer the selection bound, per port (after every plugin registered). */
  readonly selected: ReadonlyMap<PortName, string>;
  /** Binds a port (or any token) to a provider of its type; the last binding wins. */
  bind<T>(token: InjectionToken<T>, provider: Provider<NoInfer<T>>): void;
  /** Offers one named implementation of a port, of that port's type; its selector decides which is bound. */
  offer<P extends PortName>(
    port: P,
    name: string,
    provider: Provider<PortTypes[P]>,
    declaration?: OfferDeclaration,
  ): void;
  offered(port: PortName): string[];
  /** Every offer of a port built, in the order offered (a selector that asks each offer, as the forge rule does). */
  offeredInstances<P extends PortName>(port: P): Array<{ name: string; value: PortTypes[P] }>;
  select(port: PortName, selector: Selector, opts?: SelectOptions): void;
  boundByPlugin(token: InjectionToken<unknown>): string | undefined;
  contribute<T>(point: ContributionPoint<T>, value: T): void;
  contributions<T>(point: ContributionPoint<T>): readonly T[];
  resolve<T>(token: InjectionToken<T>): T;
  has(token: InjectionToken<unknown>): boolean;
}

export interface SelectOptions {
  /** The key that names the choice (e.g. CHALK_FORGE): a name nothing offered is refused naming it. */
  setting?: string;
}

function build<T>(provider: Provider<T>, c: DependencyContainer): T {
  if ('useValue' in provider) return provider.useValue;
  if ('useFactory' in provider) return provider.useFactory(c);
  return c.resolve(provider.useClass as never);
}

export class KernelError extends UserError {
  override name = 'KernelError';
}

/**
 * The composition root: a tsyringe child container, the loop hooks and the
 * plugins that filled them. Built once per command.
 */
export class Kernel implements PluginHost {
  readonly container: DependencyContainer;
  readonly hooks: LoopHooks;
  readonly plugins: string[] = [];
  /** `chalk doctor` checks, added by the core and by plugins, in order. */
  readonly checks: DoctorCheck[] = [];
  private readonly contributed = new Map<string, unknown[]>();
  private readonly boundBy = new Map<InjectionToken<unknown>, string>();
  private readonly offers = new Map<
    PortName,
    Map<string, { provider: Provider<unknown>; declaration: OfferDeclaration }>
  >();
  private readonly selectors = new Map<PortName, { selector: Selector; setting?: string }>();
  private registering = 'core';
  readonly selected = new Map<PortName, string>();

  constructor(
    readonly config: Config,
    readonly log: Log,
    parent: DependencyContainer = rootContainer,
  ) {
    this.container = parent.createChildContainer();
    this.hooks = createHooks(log);
    this.bind(Tokens.Config, { useValue: config });
    this.bind(Tokens.Log, { useValue: log });
    this.bind(Tokens.Clock, { useValue: new SystemClock() });
    this.bind(Tokens.HostGit, { useValue: hostGitPort });
  }

  /** Binds a port (or any token); the last binding wins, so a later plugin replaces an earlier one. */
  bind<T>(token: InjectionToken<T>, provider: Provider<NoInfer<T>>): void {
    // tsyringe's overloads do not accept the union directly.
    this.container.register(token, provider as never);
    this.boundBy.set(token, this.registering);
  }

  /** Which plugin made the effective binding of a token. */
  boundByPlugin(token: InjectionToken<unknown>): string | undefined {
    return this.boundBy.get(token);
  }

  /** Offers one named implementation of a port; `select` decides which offer is bound. */
  offer<P extends PortName>(
    port: P,
    name: string,
    provider: Provider<PortTypes[P]>,
    declaration: OfferDeclaration = {},
  ): void {
    let m = this.offers.get(port);
    if (!m) {
      m = new Map();
      this.offers.set(port, m);
    }
    m.set(name, { provider: provider as Provider<unknown>, declaration });
  }

  contribute<T>(point: ContributionPoint<T>, value: T): void {
    const list = this.contributed.get(point.id) ?? [];
    list.push(value);
    this.contributed.set(point.id, list);
  }

  contributions<T>(point: ContributionPoint<T>): readonly T[] {
    return (this.contributed.get(point.id) ?? []) as T[];
  }

  offered(port: PortName): string[] {
    return [...(this.offers.get(port)?.keys() ?? [])];
  }

  /**
   * Every offer of a port, built, in the order offered: for a rule that asks each provider what
   * it declares (CHALK_FORGE=auto asks each forge whether the origin is its own; the guard
   * keeps every forge's gate files). Each call builds them anew.
   */
  offeredInstances<P extends PortName>(port: P): Array<{ name: string; value: PortTypes[P] }> {
    return [...(this.offers.get(port) ?? new Map())].map(([name, { provider }]) => ({
      name,
      value: build(provider as Provider<PortTypes[P]>, this.container),
    }));
  }

  /** Declares how a port's implementation is chosen among its offers. */
  select(port: PortName, selector: Selector, opts: SelectOptions = {}): void {
    this.selectors.set(port, { selector, ...opts });
  }

  /** Registers a plugin; a second plugin of the same name is refused (bootKernel says where both came from). */
  async use(plugin: Plugin): Promise<void> {
    if (this.plugins.includes(plugin.name) || this.registering === plugin.name) {
      throw new KernelError(`two plugins are named '${plugin.name}': rename one`);
    }
    const previous = this.registering;
    this.registering = plugin.name;
    try {
      await plugin.register(this);
      this.plugins.push(plugin.name);
    } finally {
      this.registering = previous;
    }
  }

  /**
   * Binds each port that has offers and a selector but no explicit binding from a
   * later plugin. Called once every plugin is registered.
   */
  async settle(): Promise<void> {
    for (const [port, { selector, setting }] of this.selectors) {
      const token = Tokens[port] as InjectionToken<unknown>;
      const by = this.boundBy.get(token);
      if (by && by !== 'selection') continue;
      const offers = this.offers.get(port) ?? new Map();
      const declared: Offer[] = [...offers].map(([name, { declaration: d }]) =>
        d.auto ? { name, auto: (c: Config) => d.auto?.(c) === true } : { name },
      );
      const choice = await selector(this.config, [...offers.keys()], declared);
      if (choice === null) continue;
      const provider = offers.get(choice)?.provider;
      if (!provider) {
        const offered = [...offers.keys()].join(', ') || 'none';
        throw new KernelError(
          setting
            ? `${setting}=${choice}: no plugin offers a ${port} named '${choice}' (offered: ${offered})`
            : `no ${port} implementation named '${choice}' (offered: ${offered})`,
        );
      }
      const previous = this.registering;
      this.registering = `selection`;
      this.bind(token, provider);
      this.registering = previous;
      this.selected.set(port, choice);
    }
  }

  resolve<T>(token: InjectionToken<T>): T {
    if (!this.container.isRegistered(token, true)) {
      throw new KernelError(`nothing provides ${String(token)}: no plugin bound it`);
    }
    return this.container.resolve(token);
  }

  has(token: InjectionToken<unknown>): boolean {
    return this.container.isRegistered(token, true);
  }
}
