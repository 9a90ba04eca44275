import { cleanLog, type LogInput } from './log.js';
import { detectRunners, RUNNERS, type Runner } from './runners/index.js';

/** What `chalk doctor` says about a rubric log: the runners it looks like, whether their IDs were read, their report options. */
export interface ReportAdvice {
  /** Runner names, registry order; [] when the log looks like none. */
  runners: string[];
  /** True when at least one detected runner read a failing test ID. */
  testsRead: boolean;
  /** `name: hint` per detected runner. */
  hints: string[];
}

export function reportAdvice(log: LogInput, runners: readonly Runner[] = RUNNERS): ReportAdvice {
  const clean = cleanLog(log);
  const found = detectRunners(clean, runners);
  return {
    runners: found.map((r) => r.name),
    testsRead: found.some((r) => (r.failingTests(clean) ?? []).length > 0),
    hints: found.map((r) => `${r.name}: ${r.reportHint}`),
  };
}
