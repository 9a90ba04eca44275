import { Command, Option } from 'clipanion';
import { UserError } from '../core/errors.js';
import { copyEmbeddedTo } from '../core/store/copy/run.js';
import { describeUrl, embeddedPaths, storeTimeoutMs } from '../core/store/index.js';
import { commandContext, table } from './context.js';

const POSTGRES_URL = /^postgres(ql)?:\/\//;

/** Whether a connection string carries a password (URL form, or a password= parameter). */
function hasPassword(url: string): boolean {
  try {
    const u = new URL(url);
    return u.password !== '' || u.searchParams.has('password');
  } catch {
    return true;
  }
}

export default class DbCopyCommand extends Command {
  static override paths = [['db', 'copy']];
  static override usage = Command.Usage({
    description:
      "copy this machine's embedded database (runs, calls, events, lessons with their embeddings and recalls, decisions) into a Postgres server; a second copy adds nothing",
    details:
      'The server is the URL in the environment variable --to-env names, else --to URL (visible to other users in ps while it runs: prefer --to-env), else CHALK_DATABASE_URL.',
  });
  to = Option.String('--to', { description: 'the server, postgresql://... (prefer --to-env)' });
  toEnv = Option.String('--to-env', { description: 'the environment variable that holds the server URL' });

  async execute(): Promise<number> {
    const { config } = await commandContext();
    const { url, setting } = this.target(config.str('CHALK_DATABASE_URL'));
    const say = (line: string) => this.context.stderr.write(`${line}\n`);
    if (!POSTGRES_URL.test(url))
      throw new UserError(`${setting} must be a postgres:// or postgresql:// connection string`);
    if (this.to !== undefined && hasPassword(url)) {
      // argv is readable by every user of the machine: hide it from ps as soon as we can, and say so.
      process.title = `chalk db copy --to ${describeUrl(url)}`;
      say(
        'warning: the password in --to was visible to other users of this machine (ps); put the URL in an environment variable and use --to-env NAME',
      );
    }
    const r = await copyEmbeddedTo({
      paths: embeddedPaths(),
      url,
      setting,
      timeoutMs: storeTimeoutMs(config, 'server'),
      embeddedTimeoutMs: storeTimeoutMs(config, 'embedded'),
      progress: say,
    });
    if (!r.copied) {
      this.context.stdout.write(`${r.why}\n`);
      return 0;
    }
    this.context.stdout.write(`copied this machine's embedded database to ${r.where}:\n`);
    this.context.stdout.write(table(r.tables.map((t) => [t.table, `${t.added} added`, `${t.already} already there`])));
    return 0;
  }

  private target(configured: string): { url: string; setting: string } {
    if (this.to !== undefined && this.toEnv !== undefined) throw new UserError('give --to or --to-env, not both');
    if (this.toEnv !== undefined) {
      const v = process.env[this.toEnv];
      if (!v) throw new UserError(`--to-env ${this.toEnv}: that environment variable is not set`);
      return { url: v, setting: this.toEnv };
    }
    if (this.to !== undefined) return { url: this.to, setting: '--to' };
    if (configured) return { url: configured, setting: 'CHALK_DATABASE_URL' };
    throw new UserError(
      'chalk db copy needs the server to copy to: --to-env NAME (the variable holding its URL), or set CHALK_DATABASE_URL',
    );
  }
}
