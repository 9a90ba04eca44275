import { readFileSync, writeFileSync } from 'node:fs';
import { arch, cpus, platform, totalmem } from 'node:os';
import { resolve } from 'node:path';
import { Command, Option } from 'clipanion';
import { PACKAGE_ROOT } from '../core/paths.js';
import { parseDays, readCard } from '../core/report/dashboard.js';
import { shareSummary } from '../core/report/share.js';
import { PgStore } from '../core/store/index.js';
import { commandContext } from './context.js';

export default class ShareCommand extends Command {
  static override paths = [['share']];
  static override usage = Command.Usage({
    description: 'print an anonymised summary of the report card to post if you choose; nothing is sent',
  });
  days = Option.String('--days', { description: 'the window, in days (default 30)' });
  output = Option.String('--output,-o', { description: 'also save it to this file' });
  json = Option.Boolean('--json', false, { description: 'only the JSON, no guidance on stderr' });

  async execute(): Promise<number> {
    const days = parseDays(this.days);
    const { config } = await commandContext();
    const store = await PgStore.forConfig(config);
    let text: string;
    try {
      const card = await readCard(
        store.pool,
        {
          days,
          repo: null,
          deciderThreshold: config.num('CHALK_DECIDER_THRESHOLD'),
          fpRules: config.str('CHALK_FP_RULES'),
          testReportSet: config.str('CHALK_TEST_REPORT') !== '',
        },
        { for: 'summary', parallel: store.kind === 'server' },
      );
      const pkg = JSON.parse(readFileSync(`${PACKAGE_ROOT}package.json`, 'utf8')) as { version: string };
      const summary = shareSummary({
        card,
        chalkVersion: pkg.version,
        host: { platform: platform(), arch: arch(), cpus: cpus().length, memoryBytes: totalmem() },
        now: new Date(),
      });
      text = `${JSON.stringify(summary, null, 2)}\n`;
    } finally {
      await store.close();
    }
    const saved = this.output ? resolve(this.output) : null;
    if (saved) writeFileSync(saved, text, { mode: 0o600 });
    this.context.stdout.write(text);
    if (!this.json) {
      this.context.stderr.write(
        [
          `This is a summary of the last ${days} days: counts, amounts rounded to two figures and labels from fixed sets;`,
          'no repository, ticket, path, test name, error, note, prompt, URL, model revision or timestamp.',
          'Nothing has been sent. To share it, post it yourself.',
          ...(saved ? [`Saved to ${saved}`] : []),
          '',
        ].join('\n'),
      );
    }
    return 0;
  }
}
