import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import {
  type Forge,
  type ForgeStatus,
  machineKey,
  type OpenRequest,
  type Plugin,
  type PluginCommandContext,
} from 'chalk-harness/plugin';
import { z } from 'zod';

/**
 * An example third-party plugin, compiled against chalk-harness's published
 * declarations (`chalk-harness/plugin`):
 * - a forge named `file`, chosen with CHALK_FORGE=file, that "opens" a request
 *   by writing it as JSON into CHALK_FILE_FORGE_DIR instead of calling a forge;
 * - that key, declared with its own schema (an absolute path; machine-scoped,
 *   so a repository's .chalk/config cannot point it somewhere else);
 * - a command, `chalk file-forge list`, printing the requests written there.
 */

export const FORGE_NAME = 'file';
const KEY = 'CHALK_FILE_FORGE_DIR';

const dirSchema = z.string().refine((v) => v === '' || isAbsolute(v), {
  error: (i) => `${KEY} must be an absolute directory path (got '${String(i.input)}')`,
});

/** A written request as the command lists it. */
interface Written extends OpenRequest {
  n: number;
}

function requestsIn(dir: string): Written[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((f) => /^request-\d+\.json$/.test(f));
  } catch {
    return [];
  }
  return names.map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as Written).sort((a, b) => a.n - b.n);
}

export class FileForge implements Forge {
  readonly name = FORGE_NAME;
  readonly opensRequests = true;

  constructor(private readonly dir: string) {}

  async status(): Promise<ForgeStatus> {
    return this.dir === ''
      ? { cli: null, loggedIn: false, hint: `set ${KEY} to a directory` }
      : { cli: 'file', loggedIn: true };
  }

  async openRequest(req: OpenRequest): Promise<{ url: string | null }> {
    if (this.dir === '') throw new Error(`the file forge needs ${KEY} (an absolute directory path)`);
    mkdirSync(this.dir, { recursive: true });
    const n = requestsIn(this.dir).length + 1;
    const file = join(this.dir, `request-${n}.json`);
    const written: Written = { n, ...req };
    writeFileSync(file, `${JSON.stringify(written, null, 2)}\n`, { flag: 'wx' });
    return { url: `file://${file}` };
  }
}

const plugin: Plugin = {
  name: 'forge-file',
  configuration: [machineKey(KEY, '', 'Directory the file forge writes requests into (CHALK_FORGE=file)', dirSchema)],
  commands: [
    {
      path: ['file-forge', 'list'],
      usage: 'chalk file-forge list',
      load: ({ Command }) =>
        class FileForgeList extends Command<PluginCommandContext> {
          static override paths = [['file-forge', 'list']];
          async execute(): Promise<number> {
            const dir = this.context.config.str(KEY);
            const all = requestsIn(dir);
            if (all.length === 0) this.context.stdout.write(`no requests in ${dir || `(${KEY} is not set)`}\n`);
            for (const r of all) this.context.stdout.write(`${r.n}\t${r.branch} -> ${r.base}\t${r.title}\n`);
            return 0;
          }
        },
    },
  ],
  register(kernel) {
    // Offered by name: CHALK_FORGE=file selects it when the kernel settles.
    kernel.offer('Forge', FORGE_NAME, { useFactory: () => new FileForge(kernel.config.str(KEY)) });
  },
};

export default plugin;
