import type { RawReport } from '../../core/report/data.js';

/**
 * A report document as the queries return it, with `text` in every field that holds stored
 * text (so a test can put a hostile value or a sentinel everywhere at once), and small numbers.
 */
export function rawReport(text: string): RawReport {
  const at = '2026-11-28T12:34:56.789+00:00';
  return {
    summary: {
      totals: {
        calls: 30,
        cost: 12.5,
        loops: 24,
        loop_cost: 10,
        checkpoints: 10,
        no_progress_cost: 4,
        tickets: 3,
        runs: 4,
        repositories: 1,
        denials: 3,
        loops_with_denials: 2,
        failed_loops: 12,
        failed_loops_no_tests: 8,
        input_tokens: 1000,
        output_tokens: 100,
        cache_read_tokens: 3000,
        cache_write_tokens: 10,
        turns: 200,
      },
      events: { detentions: 2, submitted: 1, spec_blocked: 1, ready: 0 },
      by_kind: [
        { kind: 'continue', calls: 20, cost: 8, seconds: 600 },
        { kind: text, calls: 4, cost: 2, seconds: 40 },
      ],
      by_day: [{ day: '2026-11-28', calls: 30, cost: 12.5, loop_cost: 10, no_progress_cost: 4 }],
      cost_hist: [
        [130, 10],
        [140, 14],
      ],
      budget: { cap: 1, median: 0.3, p90: 0.6, max: 0.97, near_cap: 1, buckets: [{ bucket: 3, loops: 24 }] },
      by_prompts: [{ prompts: text, first_at: at, loops: 24, retries: 6, checkpoints: 10, cost: 12.5 }],
      by_model: [
        { model: text, loops: 4, retries: 1, checkpoints: 2, cost: 2 },
        { model: 'claude-sonnet-4-5-20250929', loops: 20, retries: 5, checkpoints: 8, cost: 10.5 },
      ],
      checks: {
        review: { ran: 4, failed: 1, cost: 0.4, fix_loops: 1, fix_cost: 0.2 },
        spec_check: { ran: 3, failed: 1, cost: 0.3, blocked_specs: 1 },
      },
      agent: [
        { status: 'ok', loops: 20, turns: 150 },
        { status: text, loops: 4, turns: 50 },
      ],
      verdicts: { repeat: 2, [text]: 1 },
      fp_rules: { shadow: 23, [text]: 1 },
      detentions_by_reason: { repeat: 1, other: 1 },
      lessons: { opened: 2, resolved: 1, distilled: 1, fingerprinted: 2, scope_repo: 1, scope_general: 0 },
      failing_tests: [{ repo: text, test: text, loops: 5, tickets: 3 }],
      flaky_tests: [{ repo: text, test: text, loops: 2, tickets: 1 }],
    },
    runs: {
      // One shadow run, detained: loops [0.5 progressed], [0.4 first], [0.3 repeat], [0.2 repeat].
      ledger: [
        {
          mode: 'shadow',
          detained: true,
          judged: true,
          blocker_only: false,
          stop_verdict: 'repeat',
          false_stop: false,
          improving: false,
          runs: 1,
          np_cost: 0.9,
          saved: 0.2,
        },
      ],
      verdictless_runs: 1,
      lessons_help: {
        all: { with: 3, with_passed: 2, without: 5, without_passed: 1 },
        same_failure: { with: 2, with_passed: 1, without: 2, without_passed: 0, failures: 1 },
      },
    },
    decider: {
      asked: 3,
      answered: 2,
      acted: 0,
      median_latency_ms: 1234,
      by_kind: { stuck: 2, [text]: 1 },
      by_mode: { shadow: 3 },
      no_answer: [{ error: text, calls: 1 }],
      models: [{ url: text, model: text, asked: 3 }],
      answers: [
        {
          url: text,
          model: text,
          run: text,
          mode: 'shadow',
          answer: 'yes',
          confidence: 0.95,
          in_window: true,
          later_progress: false,
          detained: true,
        },
      ],
    },
    tickets: {
      tickets: [
        {
          repo: text,
          ticket: text,
          at,
          loops: 4,
          cost: 1.5,
          event_kind: 'detention',
          event_at: at,
          call_kind: text,
          call_status: text,
          call_at: at,
        },
      ],
    },
  };
}
