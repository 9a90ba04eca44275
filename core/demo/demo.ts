import { spawn } from 'node:child_process';
import { mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type ModelServer, startModelServer } from '../../demo/model-server.js';
import { CREDENTIALS, hasCredential } from '../agent/credentials.js';
import { UserError } from '../errors.js';
import { run } from '../process/run.js';
import { createDemoRepo, DEMO_BRANCH } from './example.js';
import { demoScriptPicker } from './scripted-agent.js';

/**
 * `chalk demo`: Chalk's main job for a newcomer's first minute. It makes the
 * example repository and runs `chalk run` in it, for real: a sandbox, the
 * `claude` CLI, the rubric, commits, a review and a push to the local origin.
 * Without an agent credential a scripted model stands in for Claude, and the
 * first line says so.
 */

/** Repository settings the example's `.chalk/config` sets. */
const DEMO_OWN_KEYS = [
  'CHALK_TEST_CMD',
  'CHALK_FORGE',
  'CHALK_BASE_BRANCH',
  'CHALK_SETUP_CMD',
  'CHALK_TEST_REPORT',
  'CHALK_AUTO_MR',
];

export interface DemoOptions {
  /** Where to make the example; default a new temporary directory. */
  dir?: string;
  env?: NodeJS.ProcessEnv;
  out: (line: string) => void;
  /** The chalk entry point to run (default: the one running now). */
  chalkArgv?: string[];
}

export interface DemoResult {
  exitCode: number;
  root: string;
  scripted: boolean;
}

/** The first line: which model does the work. */
export function demoBanner(scripted: boolean, env: NodeJS.ProcessEnv): string {
  if (scripted) {
    return `chalk demo: no agent credential is set (${CREDENTIALS.join(', ')}), so a scripted model stands in for Claude; it makes the tool calls a real agent would, and everything else is real`;
  }
  const which = CREDENTIALS.find((k) => (env[k] ?? '') !== '');
  return `chalk demo: running with Claude through your ${which}; the two loops and the review are billed as usual`;
}

/** Runs `chalk run` in the example, streaming its output; resolves to its exit code. */
function runChalk(argv: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, argv, { cwd, env, stdio: ['ignore', 'inherit', 'inherit'] });
    const forward = (sig: NodeJS.Signals) => () => child.kill(sig);
    const onInt = forward('SIGINT');
    const onTerm = forward('SIGTERM');
    process.on('SIGINT', onInt);
    process.on('SIGTERM', onTerm);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      resolvePromise(code ?? (signal === 'SIGINT' ? 130 : 143));
    });
  });
}

export async function runDemo(opts: DemoOptions): Promise<DemoResult> {
  const env = opts.env ?? process.env;
  const scripted = !hasCredential(env);
  opts.out(demoBanner(scripted, env));
  if ((await run('docker', ['info', '--format', '{{.ServerVersion}}'], { timeoutMs: 15_000 })).code !== 0) {
    throw new UserError('the demo needs a running Docker engine; start Docker and run chalk demo again');
  }
  const dir = opts.dir ? resolve(opts.dir) : realpathSync(mkdtempSync(join(tmpdir(), 'chalk-demo-')));
  const repo = await createDemoRepo(dir);
  opts.out(`chalk demo: made an example repository in ${repo.root}, on ${DEMO_BRANCH} with a two-checkpoint spec`);
  opts.out('chalk demo: now running chalk run there, as you would in your own repository');

  let model: ModelServer | undefined;
  const childEnv: NodeJS.ProcessEnv = { ...env };
  // The example's own .chalk/config decides these, whatever this shell exports.
  for (const key of DEMO_OWN_KEYS) delete childEnv[key];
  if (scripted) {
    model = await startModelServer({ pick: demoScriptPicker() });
    if (!model.bridgeAddress) {
      await model.close();
      throw new UserError(
        "the scripted model found no Docker bridge address for the sandbox to reach it; check 'docker network inspect bridge', or export ANTHROPIC_API_KEY to use Claude",
      );
    }
    // A placeholder key: the scripted model accepts any, and it reaches no one else.
    childEnv.ANTHROPIC_API_KEY = 'scripted-demo-model';
    childEnv.ANTHROPIC_BASE_URL = model.url;
    // The scripted model cannot answer auto mode's safety classifier; the sandbox is the boundary.
    childEnv.CHALK_PERMISSION_MODE = 'bypass';
  }
  let exitCode: number;
  try {
    const argv = opts.chalkArgv ?? [...process.execArgv, process.argv[1] ?? ''];
    exitCode = await runChalk([...argv, 'run'], repo.root, childEnv);
  } finally {
    await model?.close();
  }
  if (model && model.violations.length > 0) {
    opts.out(`chalk demo: the scripted model saw requests it did not expect: ${model.violations.join('; ')}`);
  }
  opts.out(
    exitCode === 0
      ? `chalk demo: done. See what the agent did: cd ${repo.root} && git log --stat main..${DEMO_BRANCH}`
      : `chalk demo: the run ended with exit ${exitCode}; its output above says why`,
  );
  return { exitCode, root: repo.root, scripted };
}
