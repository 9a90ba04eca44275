import { readFileSync } from 'node:fs';
import { denialNote } from '../agent/denials.js';
import type { Fingerprint } from '../fingerprint/fingerprint.js';
import type { Judgement, RulesMode, VerdictStreak } from '../fingerprint/streak.js';
import { shouldFingerprint } from '../fingerprint/streak.js';
import { writeHostFile } from '../fs/host-file.js';
import type { RubricEvent, StopRequest } from '../kernel/hooks.js';
import type { AgentResult, LoopAnswer, LoopKind } from '../ports/agent.js';
import type { Log } from '../ports/log.js';
import { SANDBOX_PATHS, type SandboxSession } from '../ports/sandbox.js';
import { openCount } from '../spec/checkpoints.js';
import type { RunContext } from './context.js';
import type { RunDeps } from './deps.js';
import type { GuardVerdict } from './guard.js';
import { bringHome } from './home.js';
import { classifyLoop, type LoopEnding } from './policy.js';
import { loopPromptContext, renderLoopPrompt } from './prompt.js';
import { callRecord, secs, usd } from './record.js';
import { runRubric, takeFingerprint } from './rubric.js';
import { SYSTEM_PROMPT } from './session.js';

export interface LoopInput {
  loop: number;
  mode: LoopKind;
  /** Open checkpoints at the start of the loop (host spec). */
  openBefore: number;
  feedback: string;
  findings: string;
  lessons: string[];
  /** The commit the sandbox's new work starts from (the host HEAD). */
  base: string;
  runId: string;
}

export type LoopResult =
  | { kind: 'blocked'; detail: string; result: AgentResult }
  | {
      kind: 'judged';
      ending: LoopEnding;
      fingerprint: Fingerprint | null;
      judgement: Judgement;
      /** A deciding tap asked to stop the run. */
      stop: StopRequest | undefined;
      /** deja_vu: the ticket whose open detention fails the same way. */
      openTicket: string | null;
      /** The host HEAD after the loop (moved when a green loop came home). */
      base: string;
      result: AgentResult;
    };

const hookFingerprint = (fp: Fingerprint | null): RubricEvent['fingerprint'] =>
  fp
    ? {
        failingTests: fp.tests ?? [],
        firstError: fp.firstError === '' ? null : fp.firstError,
        treeId: fp.treeId === '' ? null : fp.treeId,
        hash: fp.hash,
        testsKnown: fp.tests !== null,
      }
    : undefined;

const hostOpenCount = (ctx: RunContext) => openCount(readFileSync(ctx.specPath, 'utf8'));

/**
 * One loop: the prompt (through `beforePrompt`), the agent call, then, unless
 * the agent reported a blocker, the harness's own rubric run, the
 * fingerprint, the commit and fast-forward of green work, the `runs` row, the
 * verdict and the `onVerdict` hook.
 */
export async function runLoop(
  ctx: RunContext,
  deps: RunDeps,
  session: SandboxSession,
  streak: VerdictStreak,
  input: LoopInput,
  log: Log,
  signal?: AbortSignal,
): Promise<LoopResult> {
  const { config } = deps;
  const rules = config.str('CHALK_FP_RULES') as RulesMode;
  const promptInput = {
    ticket: ctx.ticket,
    loop: input.loop,
    mode: input.mode,
    rubricCommand: ctx.rubricCommand,
    lessons: input.lessons,
    findings: input.findings,
    failure: input.feedback,
  };
  const hooked = await deps.hooks.beforePrompt.promise(loopPromptContext(promptInput, ctx.prompts));
  const prompt = renderLoopPrompt(hooked, promptInput);
  writeHostFile(ctx.paths.prompt, prompt);
  log.info(`loop ${input.loop} (${input.mode}) started`);

  const started = deps.clock.now().getTime();
  const result = await deps.agent.call(input.mode, prompt, {
    where: session,
    systemPromptFile: `${SANDBOX_PATHS.io}/${SYSTEM_PROMPT}`,
    cwd: SANDBOX_PATHS.repo,
    signal,
  });
  // Nothing the agent started runs on beside the rubric (or reads what comes next).
  await session.reapStrays();
  writeHostFile(ctx.paths.loopJson, result.raw);
  writeHostFile(ctx.paths.loopErr, result.stderr);
  const answer: LoopAnswer | null = result.answer === 'none' ? null : result.answer;
  const facts = {
    loop: input.loop,
    kind: input.mode,
    budgetUsd: config.num('CHALK_BUDGET_USD'),
    lessons: hooked.lessons.length,
    runId: input.runId,
    fpRules: rules,
    model: config.str('CHALK_MODEL'),
  };
  const summaryLine = (status: string, rubricExit: number | null) =>
    `loop ${input.loop} (${input.mode}): agent ${status} (${usd(result.costUsd)}, ${secs(deps.clock.now().getTime() - started)})` +
    `${rubricExit === null ? '' : `, rubric exit ${rubricExit}`}.${answer?.summary ? ` ${answer.summary}` : ''}`;
  const note = denialNote(result, ctx.paths.loopJson);

  if (answer?.status === 'blocked') {
    const judgement = streak.judge('blocked', null);
    await deps.store.calls.record(
      callRecord(ctx, result, {
        ...facts,
        agentStatus: 'blocked',
        rubricExit: 0,
        progressed: false,
        verdict: judgement.verdict,
      }),
    );
    log.info(summaryLine('blocked', null));
    if (note) log.info(note);
    return { kind: 'blocked', detail: answer.blocker?.trim() || answer.summary, result };
  }

  const agentOk = result.status === 'ok';
  const reportPath = config.str('CHALK_TEST_REPORT');
  const agentMs = deps.clock.now().getTime() - started;
  const rubricStarted = deps.clock.now().getTime();
  const rubric = await runRubric(
    ctx,
    session,
    {
      command: ctx.rubricCommand,
      timeoutS: config.num('CHALK_RUBRIC_TIMEOUT'),
      reportPath,
      rules,
      capMb: config.num('CHALK_OUTPUT_CAP_MB'),
    },
    signal,
  );
  const rubricMs = deps.clock.now().getTime() - rubricStarted;
  // Taken before anything is committed, so D is the tree the agent left.
  const fingerprint = shouldFingerprint(rules, agentOk)
    ? await takeFingerprint(ctx, session, rubric, reportPath)
    : null;

  let base = input.base;
  let openAfter = input.openBefore;
  let guard: GuardVerdict | undefined;
  if (agentOk && rubric.exitCode === 0) {
    await session.commitAll(`chalk(${ctx.ticket}): ${input.mode}, loop ${input.loop}`);
    const home = await bringHome(ctx, session, {
      base: input.base,
      target: { kind: 'fast-forward', branch: ctx.branch },
      textbook: config.str('CHALK_TEXTBOOK'),
    });
    if (home.kind === 'home') {
      base = home.head;
      openAfter = hostOpenCount(ctx);
    } else if (home.kind === 'guarded') {
      guard = home.verdict;
    } else if (home.kind === 'refused') {
      guard = { ok: false, files: [], reason: `the sandbox's work was refused: ${home.reason}` };
    }
  }
  const ending = classifyLoop({
    mode: input.mode,
    agentStatus: result.status,
    rubricExit: rubric.exitCode,
    openBefore: input.openBefore,
    openAfter,
    ...(guard ? { guard } : {}),
  });

  let openTicket: string | null = null;
  if (ending.ended === 'failed' && rules !== 'off' && fingerprint?.tests && fingerprint.hash) {
    try {
      const open = await deps.store.lessons.openByFingerprint(ctx.repo, fingerprint.hash, ctx.ticket);
      openTicket = open[0]?.ticket ?? null;
    } catch (err) {
      log.warn(`could not look for a matching open detention: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  // A loop the guard refused is judged without its fingerprint: it cannot count as a repeat.
  const judgement = streak.judge(ending.ended, ending.guarded ? null : fingerprint, openTicket !== null);
  await deps.hooks.afterRubric.promise({
    ticket: ctx.ticket,
    loop: input.loop,
    exitCode: rubric.exitCode,
    passed: rubric.exitCode === 0,
    fingerprint: hookFingerprint(fingerprint),
  });
  const callId = await deps.store.calls.record(
    callRecord(ctx, result, {
      ...facts,
      agentStatus: result.status,
      rubricExit: rubric.exitCode,
      progressed: ending.ended === 'progressed',
      fingerprint,
      verdict: judgement.verdict,
    }),
  );
  log.info(summaryLine(result.status, rubric.exitCode));
  if (note) log.info(note);
  const totalMs = deps.clock.now().getTime() - started;
  log.debug(
    `loop ${input.loop} took ${totalMs} ms: agent ${agentMs} ms, rubric ${rubricMs} ms, harness ${totalMs - agentMs - rubricMs} ms`,
  );

  let stop: StopRequest | undefined;
  if (judgement.verdict !== null) {
    stop = await deps.hooks.onVerdict.promise({
      ticket: ctx.ticket,
      loop: input.loop,
      verdict: judgement.verdict,
      rulesMode: rules,
      previous: hookFingerprint(judgement.previous),
      current: hookFingerprint(fingerprint),
      ended: ending.ended,
      reason: ending.reason,
      repo: ctx.repo,
      runId: input.runId,
      callId,
      mode: input.mode,
    });
  }
  return { kind: 'judged', ending, fingerprint, judgement, stop, openTicket, base, result };
}
