import { describe, expect, it } from 'vitest';
import { committedUsd, mayStart, worstCaseCalls, worstCaseRunUsd } from '../../core/fleet/budget.js';
import { heldParallel, maxParallel } from '../../core/fleet/parallel.js';
import { confirmed, planProblems, specFromWorkstream, validatePlan } from '../../core/fleet/plan.js';
import { schedule, type WorkstreamState, workstreamState } from '../../core/fleet/schedule.js';
import { unfinishedLine } from '../../core/fleet/status.js';
import { mayCallAgain } from '../../core/run/loop/fleet-budget.js';
import { checkpoints } from '../../core/spec/checkpoints.js';

const facts = { epic: 'EPIC-1', branches: new Map<string, string | null>() };
const ws = (ticket: string, extra: Record<string, unknown> = {}) => ({
  ticket,
  title: `Do ${ticket}`,
  checkpoints: ['a test proves it'],
  ...extra,
});

describe('plan validation, one line per problem', () => {
  it('accepts a valid plan and trims it', () => {
    const r = validatePlan(
      { workstreams: [ws('SHOP-2', { title: ' Limiter ', context: ' why ' }), ws('SHOP-3')] },
      facts,
    );
    expect(r).toEqual({
      plan: {
        workstreams: [
          { ticket: 'SHOP-2', title: 'Limiter', context: 'why', checkpoints: ['a test proves it'] },
          { ticket: 'SHOP-3', title: 'Do SHOP-3', checkpoints: ['a test proves it'] },
        ],
      },
    });
  });

  it('refuses a plan that is not an object, has no list or an empty one', () => {
    expect(planProblems([], facts)).toEqual(['the plan must be a JSON object']);
    expect(planProblems(null, facts)).toEqual(['the plan must be a JSON object']);
    expect(planProblems({}, facts)).toEqual(['the plan needs a "workstreams" list']);
    expect(planProblems({ workstreams: [] }, facts)).toEqual(['the plan has no workstream; give at least one']);
  });

  it('names every problem of every workstream, in order', () => {
    const problems = planProblems(
      {
        workstreams: [
          { ticket: 'shop-2', title: '', checkpoints: [] },
          ws('SHOP-3', { title: 'two\nlines', checkpoints: ['ok', '', 'bad\u001b[2J'] }),
          ws('SHOP-3'),
          'nope',
          ws('EPIC-1', { extra: 1 }),
          { title: 'no ticket', checkpoints: ['x'] },
          ws('../../ETC-1', { title: '\u001b]0;owned\u0007Title' }),
        ],
      },
      facts,
    );
    expect(problems).toEqual([
      'workstream 1: ticket "shop-2" is not a ticket key; use one like PROJ-123',
      'workstream 1: needs a title',
      'workstream 1: needs at least one checkpoint',
      'workstream 2 (SHOP-3): the title must be one line without control characters',
      'workstream 2 (SHOP-3): checkpoint 2 is empty',
      'workstream 2 (SHOP-3): checkpoint 3 must be one line without control characters',
      'workstream 3 (SHOP-3): the ticket is also workstream 2; give each its own',
      'workstream 4: must be an object with ticket, title and checkpoints',
      'workstream 5 (EPIC-1): the ticket is the epic itself; use its child tickets',
      'workstream 5 (EPIC-1): unknown field "extra"',
      'workstream 6: needs a ticket key like PROJ-123',
      'workstream 7: ticket "../../ETC-1" is not a ticket key; use one like PROJ-123',
      'workstream 7: the title must be one line without control characters',
    ]);
  });

  it('refuses a ticket whose branch exists unless this epic made it', () => {
    const branches = new Map<string, string | null>([
      ['SHOP-2', null],
      ['SHOP-3', 'EPIC-9'],
      ['SHOP-4', 'EPIC-1'],
    ]);
    expect(
      planProblems({ workstreams: [ws('SHOP-2'), ws('SHOP-3'), ws('SHOP-4')] }, { epic: 'EPIC-1', branches }),
    ).toEqual([
      'workstream 1 (SHOP-2): branch chalk/SHOP-2 already exists; pick another ticket or remove it (chalk cleanup)',
      'workstream 2 (SHOP-3): branch chalk/SHOP-3 already exists (made by fleet EPIC-9); pick another ticket or remove it (chalk cleanup)',
    ]);
  });

  it('refuses control characters in the context but keeps its lines', () => {
    expect(planProblems({ workstreams: [ws('SHOP-2', { context: 'a\nb\tc' })] }, facts)).toEqual([]);
    expect(planProblems({ workstreams: [ws('SHOP-2', { context: 'a\u0007' })] }, facts)).toEqual([
      'workstream 1 (SHOP-2): the context holds control characters; keep it plain text',
    ]);
  });

  it('writes a spec whose checkpoints the run reads, all open', () => {
    const spec = specFromWorkstream({
      ticket: 'SHOP-2',
      title: 'Limiter',
      context: 'ctx',
      checkpoints: ['one', 'two'],
    });
    expect(spec.split('\n')[0]).toBe('# SHOP-2: Limiter');
    expect(checkpoints(spec).map((c) => [c.text, c.ticked])).toEqual([
      ['one', false],
      ['two', false],
    ]);
  });

  it('confirms only y or yes', () => {
    expect(['y', 'Y', 'yes', ' YES \n'].map(confirmed)).toEqual([true, true, true, true]);
    expect(['', 'n', 'no', 'yess', 'y y'].map(confirmed)).toEqual([false, false, false, false, false]);
  });
});

describe('CHALK_MAX_PARALLEL', () => {
  const engine = (cpus: number, memoryMb: number, sandboxMemoryMb = 2048) => ({ cpus, memoryMb, sandboxMemoryMb });
  it('auto is the smallest of 8, half the CPUs and the memory over one sandbox', () => {
    expect(maxParallel('auto', engine(12, 8217)).value).toBe(3);
    expect(maxParallel('auto', engine(16, 32768)).value).toBe(8);
    expect(maxParallel('auto', engine(64, 1_000_000)).value).toBe(8);
    expect(maxParallel('auto', engine(4, 64000)).value).toBe(2);
    expect(maxParallel('auto', engine(16, 5120, 1024)).value).toBe(4);
  });
  it('is at least 1, and 4 when the engine cannot be asked; a number is taken as it is', () => {
    expect(maxParallel('auto', engine(1, 900))).toEqual({ value: 1, how: expect.stringContaining('at least 1') });
    expect(maxParallel('auto', null)).toEqual({ value: 4, how: 'auto: the engine could not be asked, so 4' });
    expect(maxParallel('6', engine(2, 2000))).toEqual({ value: 6, how: 'CHALK_MAX_PARALLEL=6' });
  });
  it("a repository's number is held to this machine's ceiling (auto by default); below it, it stands", () => {
    expect(heldParallel('50', 'auto', engine(12, 8217))).toEqual({
      value: 3,
      how: 'the repository asked CHALK_MAX_PARALLEL=50, held to CHALK_CEILING_MAX_PARALLEL=auto (auto: min(8, 12 CPUs / 2 = 6, (8217 MiB - 1024) / 2048 MiB = 3))',
    });
    expect(heldParallel('2', 'auto', engine(12, 8217))).toEqual({ value: 2, how: 'CHALK_MAX_PARALLEL=2' });
    expect(heldParallel('9', '6', null).value).toBe(6);
  });
  it('says how it was found', () => {
    expect(maxParallel('auto', engine(12, 8217)).how).toBe(
      'auto: min(8, 12 CPUs / 2 = 6, (8217 MiB - 1024) / 2048 MiB = 3)',
    );
  });
});

describe('the fleet budget', () => {
  const limits = { budgetUsd: 0.5, maxLoops: 4, specCheck: true, review: true, reviewRounds: 1 };
  it('a run at its worst pays the cap on every call it may make', () => {
    expect(worstCaseCalls(limits)).toBe(7);
    expect(worstCaseRunUsd(limits)).toBe(3.5);
    expect(worstCaseRunUsd({ ...limits, specCheck: false, review: false })).toBe(2);
  });
  it('counts runs in flight at their worst, finished ones at what they spent', () => {
    const spent = [
      { ticket: 'A-1', usd: 0.25, inFlight: false },
      { ticket: 'A-2', usd: 0.5, inFlight: true },
      { ticket: 'A-3', usd: 5, inFlight: true },
    ];
    expect(committedUsd({ spent }, 2)).toBe(7.25);
  });
  it('starts a run only when it fits under the ceiling at its worst', () => {
    expect(mayStart({ ceiling: null, committed: 1e9, worstCase: 1 })).toBe(true);
    expect(mayStart({ ceiling: 2, committed: 0, worstCase: 2 })).toBe(true);
    expect(mayStart({ ceiling: 2, committed: 0.01, worstCase: 2 })).toBe(false);
    expect(mayStart({ ceiling: 0.3, committed: 0.1, worstCase: 0.2 })).toBe(true);
  });
  it('lets a run in flight loop again only while one more call fits', () => {
    expect(mayCallAgain({ ceilingUsd: 1, spentUsd: 0.5, budgetUsd: 0.5 })).toBe(true);
    expect(mayCallAgain({ ceilingUsd: 1, spentUsd: 0.51, budgetUsd: 0.5 })).toBe(false);
  });
});

describe('the scheduling rule', () => {
  const w = (...states: WorkstreamState[]) => states.map((state, i) => ({ ticket: `T-${i + 1}`, state }));
  const open = { ceiling: null, committed: 0, worstCase: 1 };
  it('fills the free slots in plan order', () => {
    expect(schedule({ workstreams: w('queued', 'queued', 'queued'), slots: 2, budget: open, stopping: false })).toEqual(
      {
        start: ['T-1', 'T-2'],
        waiting: 'slot',
        done: false,
      },
    );
  });
  it('starts the next when a slot frees, and never one that started', () => {
    const s = schedule({
      workstreams: w('submitted', 'running', 'queued', 'detained', 'failed', 'stopped', 'queued'),
      slots: 2,
      budget: open,
      stopping: false,
    });
    expect(s).toEqual({ start: ['T-3'], waiting: 'slot', done: false });
  });
  it('a detained workstream frees its slot for the others', () => {
    expect(schedule({ workstreams: w('detained', 'queued'), slots: 1, budget: open, stopping: false }).start).toEqual([
      'T-2',
    ]);
  });
  it('holds the queue when the next run could pass the ceiling, counting those it starts', () => {
    const budget = { ceiling: 2.5, committed: 0, worstCase: 1 };
    expect(schedule({ workstreams: w('queued', 'queued', 'queued'), slots: 8, budget, stopping: false })).toEqual({
      start: ['T-1', 'T-2'],
      waiting: 'budget',
      done: false,
    });
    expect(
      schedule({
        workstreams: w('submitted', 'queued'),
        slots: 8,
        budget: { ...budget, committed: 2 },
        stopping: false,
      }),
    ).toEqual({ start: [], waiting: 'budget', done: true });
  });
  it('starts nothing once asked to stop, and is done when nothing runs', () => {
    expect(schedule({ workstreams: w('running', 'queued'), slots: 4, budget: open, stopping: true })).toEqual({
      start: [],
      waiting: 'stopping',
      done: false,
    });
    expect(
      schedule({ workstreams: w('submitted', 'ready', 'detained'), slots: 1, budget: open, stopping: false }),
    ).toEqual({ start: [], waiting: null, done: true });
  });
});

describe("a workstream's state", () => {
  const f = { live: false, runCommits: false, started: false, exitCode: null };
  it('is running while its pid lives, whatever else is known', () => {
    expect(workstreamState({ ...f, live: true, recorded: 'detained', exitCode: 3 })).toBe('running');
  });
  it('is queued again after office hours (a rejoin no start consumed), but running while its pid lives', () => {
    const detained = { ...f, started: true, recorded: 'detained' as const, exitCode: 3 };
    expect(workstreamState(detained)).toBe('detained');
    expect(workstreamState({ ...detained, rejoin: true })).toBe('queued');
    expect(workstreamState({ ...detained, rejoin: true, live: true })).toBe('running');
  });
  it('is what the store recorded when it ended', () => {
    expect(workstreamState({ ...f, recorded: 'submitted' })).toBe('submitted');
    expect(workstreamState({ ...f, recorded: 'done' })).toBe('ready');
    expect(workstreamState({ ...f, recorded: 'detained', exitCode: 1 })).toBe('detained');
    expect(workstreamState({ ...f, recorded: 'spec-blocked' })).toBe('spec-blocked');
  });
  it('else what its exit code says', () => {
    expect(workstreamState({ ...f, exitCode: 3 })).toBe('detained');
    expect(workstreamState({ ...f, exitCode: 143 })).toBe('stopped');
    expect(workstreamState({ ...f, exitCode: 5 })).toBe('failed');
    expect(workstreamState({ ...f, exitCode: 1, recorded: 'stopped' })).toBe('failed');
  });
  it('is never queued again once anything shows it started', () => {
    expect(workstreamState(f)).toBe('queued');
    expect(workstreamState({ ...f, recorded: 'new' })).toBe('queued');
    expect(workstreamState({ ...f, started: true })).toBe('stopped');
    expect(workstreamState({ ...f, runCommits: true })).toBe('stopped');
    expect(workstreamState({ ...f, recorded: 'stopped' })).toBe('stopped');
  });
});

describe("chalk fleet's exit: every workstream at a request, or a line naming the rest", () => {
  const ws = (ticket: string, state: WorkstreamState) => ({ ticket, state });
  it('is null when each is submitted or ready', () => {
    expect(
      unfinishedLine({ epic: 'E-1', workstreams: [ws('E-2', 'submitted'), ws('E-3', 'ready')] } as never),
    ).toBeNull();
  });
  it('names each of the rest with its state, in plan order', () => {
    const line = unfinishedLine({
      epic: 'E-1',
      workstreams: [ws('E-2', 'detained'), ws('E-3', 'submitted'), ws('E-4', 'queued')],
    } as never);
    expect(line).toBe(
      'fleet E-1: 1 of 3 workstreams got to a request; E-2 detained, E-4 queued (chalk fleet E-1 --status)',
    );
  });
});
