import { Command, Option } from 'clipanion';
import { UserError } from '../core/errors.js';
import type { Kernel } from '../core/kernel/kernel.js';
import { fleetPaths } from '../core/layout.js';
import type { Store } from '../core/ports/store.js';
import { mainRoot, repoName, TICKET_RE } from '../core/repo/git.js';
import { type CommandContext, commandContext, kernelContext, table } from './context.js';

const USAGE = 'chalk fleet EPIC [--plan FILE] [--yes] | --status [--json] | --stop';

/** One line from stdin (the confirmation), or '' at its end. */
function readLine(stdin: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    const onData = (d: Buffer | string) => {
      text += d.toString();
      if (text.includes('\n')) done();
    };
    const done = () => {
      stdin.off('data', onData);
      stdin.off('end', done);
      (stdin as NodeJS.ReadStream).pause?.();
      resolve(text.split('\n')[0] ?? '');
    };
    stdin.on('data', onData);
    stdin.once('end', done);
  });
}

export default class FleetCommand extends Command {
  static override paths = [['fleet']];
  static override usage = Command.Usage({
    description: 'plan an epic as workstreams and run them in parallel under one supervisor and one spend ceiling',
  });
  epic = Option.String({ required: true });
  plan = Option.String('--plan', { description: 'the plan as a JSON file (replaces the saved one)' });
  yes = Option.Boolean('--yes,-y', false, { description: 'launch without asking' });
  status = Option.Boolean('--status', false, {
    description: "show the fleet's supervisor, slots, queue and workstreams",
  });
  json = Option.Boolean('--json', false, { description: 'with --status: as JSON' });
  stop = Option.Boolean('--stop', false, {
    description: 'stop the fleet: runs in flight end their call, nothing more starts',
  });
  supervise = Option.Boolean('--supervise', false, { hidden: true });

  async execute(): Promise<number> {
    if (!TICKET_RE.test(this.epic))
      throw new UserError(`'${this.epic}' is not an epic's ticket key; use one like PROJ-100 (${USAGE})`, 2);
    if ([this.status, this.stop, this.supervise].filter(Boolean).length > 1 || (this.json && !this.status))
      throw new UserError(`choose one of --status, --stop (--json goes with --status): ${USAGE}`, 2);
    if ((this.status || this.stop) && (this.plan || this.yes))
      throw new UserError(`--plan and --yes start a fleet; --status and --stop do not take them: ${USAGE}`, 2);
    const base = await commandContext();
    if (!base.root) throw new UserError('chalk fleet runs inside a git repository: cd into one');
    const root = await mainRoot(base.root);
    const repo = await repoName(root);
    if (this.supervise) return this.runSupervisor(repo, root);
    if (this.status) return this.showStatus(repo, root);
    if (this.stop) return this.stopIt(repo, root);
    return this.launch(repo, root, base);
  }

  private async withFleet<T>(repo: string, root: string, fn: (k: FleetKit) => Promise<T>): Promise<T> {
    const { savedPlan } = await import('../core/fleet/source.js');
    const plan = savedPlan(repo, this.epic);
    if (!plan)
      throw new UserError(`no plan saved for ${this.epic}; start it with: chalk fleet ${this.epic} --plan FILE`);
    const { kernel } = await kernelContext();
    const { Tokens } = await import('../core/kernel/tokens.js');
    const { fleetOf, parallelism } = await import('../core/fleet/fleet.js');
    const store = kernel.resolve(Tokens.Store);
    try {
      const parallel = await parallelism(kernel.config, () => kernel.resolve(Tokens.Sandbox));
      const fleet = fleetOf({
        repo,
        root,
        epic: this.epic,
        plan,
        settings: { config: kernel.config, parallel },
        store,
      });
      return await fn({ fleet, kernel, store });
    } finally {
      await store.close().catch(() => undefined);
    }
  }

  private async showStatus(repo: string, root: string): Promise<number> {
    const { currentStatus } = await import('../core/fleet/fleet.js');
    const { statusLines } = await import('../core/fleet/status.js');
    return this.withFleet(repo, root, async ({ fleet }) => {
      const s = await currentStatus(fleet);
      if (this.json) {
        this.context.stdout.write(`${JSON.stringify(s, null, 2)}\n`);
        return 0;
      }
      const { head, rows } = statusLines(s);
      this.context.stdout.write(`${head.join('\n')}\n${table(rows)}`);
      return 0;
    });
  }

  private async stopIt(repo: string, root: string): Promise<number> {
    const { currentStatus, stopFleet } = await import('../core/fleet/fleet.js');
    const { statusLines } = await import('../core/fleet/status.js');
    return this.withFleet(repo, root, async ({ fleet }) => {
      const r = await stopFleet(fleet, { say: (l) => this.context.stdout.write(`${l}\n`) });
      this.context.stdout.write(
        `fleet ${this.epic} stopped${r.runs.length > 0 ? `; ${r.runs.join(', ')} ended their call and can be run again with chalk run` : ''}\n`,
      );
      const { rows } = statusLines(await currentStatus(fleet));
      this.context.stdout.write(table(rows));
      return 0;
    });
  }

  private async runSupervisor(repo: string, root: string): Promise<number> {
    const { acquirePidLock, releasePidLock } = await import('../core/fleet/lock.js');
    const paths = fleetPaths(repo, this.epic);
    const { mkdirSync } = await import('node:fs');
    mkdirSync(paths.dir, { recursive: true });
    const stamp = (l: string) => this.context.stdout.write(`${new Date().toISOString()} ${l}\n`);
    if (!acquirePidLock(paths.pid)) {
      stamp('another supervisor holds this fleet; this one exits');
      return 0;
    }
    try {
      const { supervise } = await import('../core/fleet/supervisor.js');
      const { launchRun } = await import('../core/fleet/launch.js');
      const controller = new AbortController();
      const onSignal = (sig: NodeJS.Signals) => {
        stamp(`${sig}: stopping`);
        controller.abort();
      };
      process.on('SIGTERM', onSignal);
      process.on('SIGINT', onSignal);
      // The terminal closing is no reason to stop (the supervisor has its own session anyway).
      process.on('SIGHUP', () => {});
      return await this.withFleet(repo, root, async ({ fleet }) => {
        await supervise(fleet, {
          launch: ({ ticket, worktree }) => launchRun({ repo, ticket, worktree, env: process.env }),
          log: stamp,
          signal: controller.signal,
        });
        return 0;
      });
    } finally {
      releasePidLock(paths.pid);
    }
  }

  private async launch(repo: string, root: string, base: CommandContext): Promise<number> {
    const { config } = base;
    const out = (l: string) => this.context.stdout.write(`${l}\n`);
    const paths = fleetPaths(repo, this.epic);
    const { liveHolder } = await import('../core/fleet/lock.js');
    const running = liveHolder(paths.pid);
    if (running !== null) {
      if (this.plan)
        throw new UserError(
          `fleet ${this.epic} is running (supervisor pid ${running}); stop it first (chalk fleet ${this.epic} --stop) to change its plan`,
        );
      out(`fleet ${this.epic} is running (supervisor pid ${running}): attaching (Ctrl-C leaves it running)`);
      await this.showStatus(repo, root);
      return this.attach(repo, root, running);
    }
    const { loadPlan, PlanError } = await import('../core/fleet/source.js');
    const { planRows } = await import('../core/fleet/plan.js');
    const { hostGitPort } = await import('../core/git/port.js');
    const loading = loadPlan({
      repo,
      root,
      epic: this.epic,
      file: this.plan,
      git: hostGitPort,
      // Booted only when Claude is asked: a plan from a file or a saved one needs no kernel.
      ask: async (prompt) => {
        const { kernel } = await kernelContext(base);
        const { Tokens } = await import('../core/kernel/tokens.js');
        const { planInSandbox } = await import('../core/fleet/plan-call.js');
        const { mkdirSync } = await import('node:fs');
        mkdirSync(paths.dir, { recursive: true });
        return planInSandbox(prompt, {
          repo,
          root,
          epic: this.epic,
          base: kernel.config.str('CHALK_BASE_BRANCH'),
          dir: paths.dir,
          prompts: { root },
          rubricCommand: kernel.config.str('CHALK_TEST_CMD'),
          sandbox: kernel.resolve(Tokens.Sandbox),
          agent: kernel.resolve(Tokens.Agent),
          git: hostGitPort,
        });
      },
      onAsk: () =>
        out(
          `asking Claude to break down ${this.epic} in a read-only sandbox of ${config.str('CHALK_BASE_BRANCH')} (up to $${config.str('CHALK_BUDGET_USD')}, CHALK_BUDGET_USD)`,
        ),
    });
    const loaded = await loading.catch((err: unknown) => {
      if (!(err instanceof PlanError)) throw err;
      // One line per problem (the CLI prints one line of an error's message).
      for (const p of err.problems) this.context.stderr.write(`chalk: invalid plan (${err.where}): ${p}\n`);
      return null;
    });
    if (!loaded) return 1;
    const { ceilingOf, worstCaseCalls, worstCaseRunUsd, usd } = await import('../core/fleet/budget.js');
    const { runLimits } = await import('../core/fleet/fleet.js');
    const ceiling = ceilingOf(config.str('CHALK_FLEET_BUDGET_USD'));
    const limits = runLimits(config);
    if (ceiling !== null && worstCaseRunUsd(limits) > ceiling)
      throw new UserError(
        `CHALK_FLEET_BUDGET_USD=${config.str('CHALK_FLEET_BUDGET_USD')} is below one run at its worst (${usd(worstCaseRunUsd(limits))}: CHALK_BUDGET_USD=${config.str('CHALK_BUDGET_USD')} x ${worstCaseCalls(limits)} calls), so nothing could start; raise it, or lower CHALK_BUDGET_USD or CHALK_MAX_LOOPS`,
      );
    out(`plan for ${this.epic} (${loaded.path}${loaded.origin === 'saved' ? ', saved earlier' : ''}):`);
    this.context.stdout.write(table(planRows(loaded.plan)));
    if (!this.yes) {
      const stdin = this.context.stdin as NodeJS.ReadStream;
      if (!stdin.isTTY)
        throw new UserError(`no terminal to confirm the plan on; read it above and pass --yes to launch it`);
      this.context.stdout.write(`Launch these ${loaded.plan.workstreams.length} workstreams? [y/N] `);
      const { confirmed } = await import('../core/fleet/plan.js');
      if (!confirmed(await readLine(stdin)))
        throw new UserError(`not launched; edit ${loaded.path} and pass it with --plan, or run again`);
    }
    const { prepareWorkstreams } = await import('../core/fleet/workstreams.js');
    const made = await prepareWorkstreams({
      root,
      repo,
      epic: this.epic,
      plan: loaded.plan,
      base: config.str('CHALK_BASE_BRANCH'),
      git: hostGitPort,
    });
    for (const w of made)
      out(
        w.created
          ? `${w.ticket}: worktree ${w.worktree}, spec committed`
          : `${w.ticket}: worktree ${w.worktree} (already there)`,
      );
    const { startSupervisor, logSize } = await import('../core/fleet/fleet.js');
    const offset = logSize(paths.log);
    const s = await startSupervisor({ repo, root, epic: this.epic, env: process.env });
    out(
      `fleet ${this.epic}: supervisor pid ${s.pid}, log ${paths.log}; follow again with chalk fleet ${this.epic}, stop with chalk fleet ${this.epic} --stop`,
    );
    return this.attach(repo, root, s.pid, offset);
  }

  /** Prints the status, then the supervisor's log as it goes, until the supervisor exits. */
  private async attach(repo: string, root: string, pid: number, offset?: number): Promise<number> {
    const { followLog, logSize } = await import('../core/fleet/fleet.js');
    const paths = fleetPaths(repo, this.epic);
    await followLog({
      path: paths.log,
      pid,
      offset: offset ?? logSize(paths.log),
      write: (t) => this.context.stdout.write(t),
    });
    const { currentStatus } = await import('../core/fleet/fleet.js');
    const { statusLines, unfinishedLine } = await import('../core/fleet/status.js');
    return this.withFleet(repo, root, async ({ fleet }) => {
      const s = await currentStatus(fleet);
      const { head, rows } = statusLines(s);
      this.context.stdout.write(`${head.join('\n')}\n${table(rows)}`);
      const unfinished = unfinishedLine(s);
      if (unfinished !== null) throw new UserError(unfinished);
      return 0;
    });
  }
}

interface FleetKit {
  fleet: import('../core/fleet/supervisor.js').Fleet;
  kernel: Kernel;
  store: Store;
}
