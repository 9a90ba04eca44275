import { Command, Option } from 'clipanion';
import { cleanupUpgrade, upgradeEmbedded } from '../core/store/embedded/upgrade.js';
import { embeddedPaths } from '../core/store/index.js';

export default class DbUpgradeCommand extends Command {
  static override paths = [['db', 'upgrade']];
  static override usage = Command.Usage({
    description:
      "move the embedded database to this Chalk's Postgres major (the old directory is kept); --cleanup removes what an upgrade kept",
  });
  cleanup = Option.Boolean('--cleanup', false, {
    description: 'remove the old directories and engines an upgrade kept',
  });

  async execute(): Promise<number> {
    // Always this machine's embedded database: a server in CHALK_DATABASE_URL upgrades with its own tools.
    const paths = embeddedPaths();
    const out = (line: string) => this.context.stdout.write(`${line}\n`);
    if (this.cleanup) {
      const removed = cleanupUpgrade(paths, process.env);
      out(removed.length === 0 ? 'nothing to clean up' : removed.map((p) => `removed ${p}`).join('\n'));
      return 0;
    }
    const r = await upgradeEmbedded(paths, process.env, (line) => this.context.stderr.write(`${line}\n`));
    if (!r.moved) {
      out(r.why);
      return 0;
    }
    const rows = Object.entries(r.rows)
      .map(([t, n]) => `${t} ${n}`)
      .join(', ');
    out(`moved the embedded database from Postgres ${r.from} to ${r.to}, every row read back the same: ${rows}`);
    out(`the Postgres ${r.from} directory is kept at ${r.kept}; chalk db upgrade --cleanup removes it`);
    return 0;
  }
}
