import 'reflect-metadata';
import type { CommandClass } from 'clipanion';
import { type DependencyContainer, type InjectionToken, container as rootContainer } from 'tsyringe';
import type { Config } from '../config/config.js';
import type { KeySpec } from '../config/schemas.js';
import { UserError } from '../errors.js';
import { hostGitPort } from '../git/port.js';
import type { Log } from '../ports/log.js';
import type { DeciderStatusPart, DoctorCheck } from './doctor.js';
import { createHooks, type LoopHooks } from './hooks.js';
import { SystemClock } from './system-clock.js';
import { type PortName, Tokens } from './tokens.js';

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
  load(clipanion: typeof import('clipanion')): Promise<CommandClass> | CommandClass;
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
  register(kernel: Kernel): void | Promise<void>;
}

export type Provider<T> =
  | { useValue: T }
  | { useFactory: (c: DependencyContainer) => T }
  | { useClass: new (...args: never[]) => T };

/**
 * Picks one named implementation of a port from the configuration (e.g. CHALK_FORGE=auto);
 * null binds nothing (no offer fits, and the port is optional).
 */
export type Selector = (config: Config, offered: string[]) => string | null | Promise<string | null>;

export interface SelectOptions {
  /** The key that names the choice (e.g. CHALK_FORGE): a name nothing offered is refused naming it. */
  setting?: string;
}

export class KernelError extends UserError {
  override name = 'KernelError';
}

/**
 * The composition root: a tsyringe child container, the loop hooks and the
 * plugins that filled them. Built once per command.
 */
export class Kernel {
  readonly container: DependencyContainer;
  readonly hooks: LoopHooks;
  readonly plugins: string[] = [];
  /** `chalk doctor` checks, added by the core and by plugins, in order. */
  readonly checks: DoctorCheck[] = [];
  /** What plugins add to `chalk decider status`, in order (`kernel.deciderStatus.push(...)`). */
  readonly deciderStatus: DeciderStatusPart[] = [];
  private readonly boundBy = new Map<InjectionToken<unknown>, string>();
  private readonly offers = new Map<PortName, Map<string, Provider<unknown>>>();
  private readonly selectors = new Map<PortName, { selector: Selector; setting?: string }>();
  private registering = 'core';

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
  bind<T>(token: InjectionToken<T>, provider: Provider<T>): void {
    // tsyringe's overloads do not accept the union directly.
    this.container.register(token, provider as never);
    this.boundBy.set(token, this.registering);
  }

  /** Which plugin made the effective binding of a token. */
  boundByPlugin(token: InjectionToken<unknown>): string | undefined {
    return this.boundBy.get(token);
  }

  /** Offers one named implementation of a port; `select` decides which offer is bound. */
  offer<T>(port: PortName, name: string, provider: Provider<T>): void {
    let m = this.offers.get(port);
    if (!m) {
      m = new Map();
      this.offers.set(port, m);
    }
    m.set(name, provider as Provider<unknown>);
  }

  offered(port: PortName): string[] {
    return [...(this.offers.get(port)?.keys() ?? [])];
  }

  /** Declares how a port's implementation is chosen among its offers. */
  select(port: PortName, selector: Selector, opts: SelectOptions = {}): void {
    this.selectors.set(port, { selector, ...opts });
  }

  async use(plugin: Plugin): Promise<void> {
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
      const choice = await selector(this.config, [...offers.keys()]);
      if (choice === null) continue;
      const provider = offers.get(choice);
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

  readonly selected = new Map<PortName, string>();

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
