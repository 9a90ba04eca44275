import type { CommandClass } from 'clipanion';
import { type PluginCommandContext, UserError } from '../../core/plugin.js';
import { REGISTRIES } from './egress/daemon/policy.js';
import { proposals, trustProposals, untrustProposals } from './egress/trust.js';

type Clipanion = typeof import('clipanion');

/**
 * `chalk egress`: what this repository's sandboxes may reach and why (the machine's setting, the
 * registries, the person's hosts, the repository's proposals and whether this machine trusts
 * them); `trust` and `untrust` acknowledge or take back the proposals.
 */
export function egressShowCommand({ Command, Option }: Clipanion): CommandClass<PluginCommandContext> {
  return class EgressShowCommand extends Command<PluginCommandContext> {
    static override paths = [['egress']];
    static override usage = Command.Usage({
      description: "what this repository's sandboxes may reach through the egress proxy, and who allowed it",
    });
    json = Option.Boolean('--json', false);

    async execute(): Promise<number> {
      const { root, config } = this.context;
      const mode = config.entry('CHALK_EGRESS');
      const allow = config.list('CHALK_EGRESS_ALLOW');
      const proposed = config.str('CHALK_EGRESS_HOSTS');
      const fromEnv = config.entry('CHALK_EGRESS_HOSTS').source === 'env';
      const p =
        fromEnv || !root
          ? { trusted: proposed === '' ? [] : proposed.split(','), untrusted: [] }
          : proposals(root, proposed);
      const runtime = config.str('CHALK_SANDBOX_RUNTIME');
      if (this.json) {
        this.context.stdout.write(
          `${JSON.stringify({ mode: mode.value, registries: mode.value === 'registries' ? REGISTRIES : [], allow, proposed: p, runtime }, null, 2)}\n`,
        );
        return 0;
      }
      const out = (l: string) => this.context.stdout.write(`${l}\n`);
      out(`CHALK_EGRESS=${mode.value} (${mode.source === 'default' ? 'the default' : 'set in the environment'})`);
      if (mode.value === 'registries') for (const r of REGISTRIES) out(`  ${r.name}: ${r.hosts.join(', ')}`);
      if (mode.value === 'open')
        out('  any public host on any port (addresses in private ranges only when allowed by address)');
      out(allow.length ? `CHALK_EGRESS_ALLOW: ${allow.join(', ')}` : 'CHALK_EGRESS_ALLOW: nothing more');
      if (p.trusted.length) out(`repository's hosts (CHALK_EGRESS_HOSTS), trusted: ${p.trusted.join(', ')}`);
      if (p.untrusted.length)
        out(
          `repository's hosts (CHALK_EGRESS_HOSTS), NOT trusted (closed): ${p.untrusted.join(', ')}; review, then run: chalk egress trust`,
        );
      out("the model: only through Chalk's gateway, which holds the credential (the sandbox has a per-run token)");
      out(`runtime: ${runtime}${runtime === 'runsc' ? ' (gVisor)' : ''} (CHALK_SANDBOX_RUNTIME)`);
      return 0;
    }
  };
}

export function egressTrustCommand({ Command }: Clipanion): CommandClass<PluginCommandContext> {
  return class EgressTrustCommand extends Command<PluginCommandContext> {
    static override paths = [['egress', 'trust']];
    static override usage = Command.Usage({
      description:
        "acknowledge, on this machine, the hosts this repository's .chalk/config asks its sandboxes to reach (CHALK_EGRESS_HOSTS)",
    });

    async execute(): Promise<number> {
      const { root, config } = this.context;
      if (!root) throw new UserError('chalk egress trust runs inside a git repository: cd into one');
      const proposed = config.str('CHALK_EGRESS_HOSTS');
      if (proposed === '') {
        this.context.stdout.write('.chalk/config asks for no hosts (CHALK_EGRESS_HOSTS): nothing to trust\n');
        return 0;
      }
      const added = trustProposals(root, proposed);
      const all = proposals(root, proposed).trusted;
      this.context.stdout.write(
        added.length ? `trusted on this machine: ${added.join(', ')}\n` : `already trusted: ${all.join(', ')}\n`,
      );
      return 0;
    }
  };
}

export function egressUntrustCommand({ Command }: Clipanion): CommandClass<PluginCommandContext> {
  return class EgressUntrustCommand extends Command<PluginCommandContext> {
    static override paths = [['egress', 'untrust']];
    static override usage = Command.Usage({
      description: "take back this machine's trust of the hosts this repository asks for",
    });

    async execute(): Promise<number> {
      const { root } = this.context;
      if (!root) throw new UserError('chalk egress untrust runs inside a git repository: cd into one');
      const had = untrustProposals(root);
      this.context.stdout.write(
        had.length ? `no longer trusted: ${had.join(', ')}\n` : 'nothing was trusted for this repository\n',
      );
      return 0;
    }
  };
}
