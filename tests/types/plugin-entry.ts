/**
 * Type-level tests of `chalk-harness/plugin` (checked by `npm run typecheck`; never run). Each
 * `@ts-expect-error` must stay an error: if the typing regresses (offer() no longer typed by
 * port, a port member made optional, the command context untyped, the Kernel class handed to
 * plugins again), the directive is unused and the typecheck fails.
 */
import type { CommandClass } from 'clipanion';
import {
  type AdmissionLimit,
  type DeciderEntry,
  type DecisionFailure as DecisionFailureType,
  type DecisionReply,
  type DecisionResponse,
  type FailureKind,
  type Forge,
  type ImportedBundle,
  type KeyTable,
  type Plugin,
  type PluginCommandContext,
  type PluginHost,
  type PortTypes,
  Tokens,
} from '../../core/plugin.js';

const forge: Forge = {
  name: 'acme',
  opensRequests: true,
  status: async () => ({ cli: null, loggedIn: false }),
  openRequest: async () => ({ url: null }),
};
const { opensRequests: _dropped, ...withoutOpensRequests } = forge;

export const plugin: Plugin = {
  name: 'types',
  register(host) {
    host.offer('Forge', 'acme', { useValue: forge });
    // @ts-expect-error a Forge without opensRequests is not a Forge
    host.offer('Forge', 'half', { useValue: withoutOpensRequests });
    // @ts-expect-error an offer is checked against its port: a Forge is not a Decider
    host.offer('Decider', 'acme', { useValue: forge });
    // @ts-expect-error bind is typed by its token too
    host.bind(Tokens.Decider, { useFactory: () => forge });
    // @ts-expect-error a port that does not exist
    host.offer('Printer', 'acme', { useValue: forge });
    // @ts-expect-error plugins get the narrow host, not the Kernel's container
    host.container;
  },
};

// The command context is typed: config and kernel() are there, nothing is `unknown`.
export const useContext = async (ctx: PluginCommandContext): Promise<string> => {
  const host: PluginHost = await ctx.kernel();
  return `${ctx.config.str('CHALK_FORGE')} ${host.plugins.length}`;
};
// @ts-expect-error a command on the bare clipanion context is not a plugin command
export const bare: CommandClass<PluginCommandContext> = {} as CommandClass;

// Every type the Decider port speaks is named by the entry.
export const limit: AdmissionLimit = { kind: 'window', tokensPerMinute: 100, burst: 100 };
export const entry: DeciderEntry = { id: 'x', url: 'http://127.0.0.1:1', maxContextTokens: 10, limit };
export const kind: FailureKind = 'timeout';
// @ts-expect-error FailureKind is a closed union
export const notKind: FailureKind = 'tired';
export const reply = (failure: DecisionFailureType, response: DecisionResponse): DecisionReply[] => [
  { ok: false, failure },
  { ok: true, response },
];
export type Bundles = ImportedBundle;
export type Table = KeyTable;
export type ForgePort = PortTypes['Forge'];
