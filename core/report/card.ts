import type { TicketState } from '../ports/store.js';
import { deriveState } from '../store/index.js';
import {
  type Band,
  type Calibration,
  calibrationGate,
  confidenceBands,
  type GateAt,
  gateAt,
  type StuckAnswer,
} from './calibration.js';
import type { RawReport } from './data.js';
import { type Ledger, ledgerOf } from './ledger.js';
import { type Note, notesForNextTerm } from './notes.js';

/** What the report card knows besides the telemetry: the window and the settings in force. */
export interface CardSettings {
  days: number;
  /** The repository shown, or null for all. */
  repo: string | null;
  deciderThreshold: number;
  fpRules: string;
  testReportSet: boolean;
}

export interface Card {
  settings: CardSettings;
  raw: RawReport;
  grade: {
    costPerCheckpoint: number | null;
    spend: number;
    requestsOpened: number;
    detentions: number;
    checkpoints: number;
  };
  /** Share of loop spend (0..1) that made no progress, or null with no loop spend. */
  noProgressShare: number | null;
  notes: Note[];
  ledger: Ledger;
  bands: Band[];
  calibration: Calibration[];
  /** Shadow runs of the window a confident stuck (at the threshold) would have stopped, judged like the gate. */
  deciderWouldStop: GateAt;
  tickets: { repo: string; ticket: string; state: TicketState; loops: number; cost: number; at: string }[];
}

const ratio = (a: number, b: number) => (b > 0 ? a / b : null);

/** The report card from the queries' document: the arithmetic SQL does not do. */
export function buildCard(raw: RawReport, settings: CardSettings): Card {
  const t = raw.summary.totals;
  const checkpoints = t.checkpoints ?? 0;
  const ledger = ledgerOf(
    raw.runs.ledger.map((g) => ({
      mode: g.mode,
      detained: g.detained,
      judged: g.judged,
      blockerOnly: g.blocker_only,
      stopVerdict: g.stop_verdict,
      falseStop: g.false_stop,
      improving: g.improving,
      runs: Number(g.runs),
      noProgressCost: Number(g.np_cost),
      saved: Number(g.saved),
    })),
  );
  const answers: StuckAnswer[] = raw.decider.answers.map((a) => ({
    url: a.url,
    model: a.model,
    run: a.run,
    mode: a.mode,
    answer: a.answer,
    confidence: Number(a.confidence),
    inWindow: a.in_window,
    laterProgress: a.later_progress,
    detained: a.detained,
    ...(a.count !== undefined ? { count: a.count } : {}),
  }));
  const help = raw.runs.lessons_help.same_failure;
  const ticketsPerTest = new Map<string, number>();
  for (const f of raw.summary.failing_tests)
    ticketsPerTest.set(`${f.repo}\n${f.test}`, Math.max(ticketsPerTest.get(`${f.repo}\n${f.test}`) ?? 0, f.tickets));
  const notes = notesForNextTerm({
    loops: t.loops ?? 0,
    cap: raw.summary.budget.cap,
    p90LoopCost: raw.summary.budget.p90,
    reviews: { ran: raw.summary.checks.review.ran, failed: raw.summary.checks.review.failed },
    lessons: {
      with: help.with,
      withPassed: help.with_passed,
      without: help.without,
      withoutPassed: help.without_passed,
    },
    fpRules: settings.fpRules,
    ledgerRecommendsOn: ledger.recommendOn,
    failedLoops: t.failed_loops ?? 0,
    failedLoopsNoTests: t.failed_loops_no_tests ?? 0,
    testReportSet: settings.testReportSet,
    loopsWithDenials: t.loops_with_denials ?? 0,
    failingTests: [...ticketsPerTest.entries()].map(([k, tickets]) => ({ test: k, tickets })),
    flakyTests: raw.summary.flaky_tests.map((t) => ({ test: `${t.repo}\n${t.test}`, loops: t.loops })),
  });
  return {
    settings,
    raw,
    grade: {
      costPerCheckpoint: ratio(t.cost ?? 0, checkpoints),
      spend: t.cost ?? 0,
      requestsOpened: raw.summary.events.submitted,
      detentions: raw.summary.events.detentions,
      checkpoints,
    },
    noProgressShare: ratio(t.no_progress_cost ?? 0, t.loop_cost ?? 0),
    notes,
    ledger,
    bands: confidenceBands(answers),
    calibration: calibrationGate(answers, settings.deciderThreshold),
    deciderWouldStop: gateAt(
      answers.filter((a) => a.inWindow),
      settings.deciderThreshold,
    ),
    tickets: raw.tickets.tickets.map((k) => ({
      repo: k.repo,
      ticket: k.ticket,
      loops: k.loops,
      cost: k.cost,
      at: k.at,
      state: deriveState({
        lastEvent: k.event_kind && k.event_at ? { kind: k.event_kind, at: new Date(k.event_at) } : null,
        lastCall:
          k.call_kind && k.call_at
            ? { kind: k.call_kind, agentStatus: k.call_status ?? '', at: new Date(k.call_at) }
            : null,
      }),
    })),
  };
}
