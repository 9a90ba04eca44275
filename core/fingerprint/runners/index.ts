import type { LogWindows } from '../log.js';
import { CTEST } from './ctest.js';
import { checksHolding } from './detect.js';
import { DOTNET } from './dotnet.js';
import { GO } from './go.js';
import { JS_RUNNERS } from './js.js';
import { GRADLE, SUREFIRE } from './jvm.js';
import { PHPUNIT } from './php.js';
import { PYTEST, UNITTEST } from './python.js';
import { MINITEST, RSPEC } from './ruby.js';
import { CARGO, NEXTEST } from './rust.js';
import type { Runner } from './types.js';

export type { Runner } from './types.js';

/** Every runner the fingerprint reads, in the order their IDs are collected. */
export const RUNNERS: readonly Runner[] = [
  PYTEST,
  UNITTEST,
  GO,
  CARGO,
  NEXTEST,
  RSPEC,
  MINITEST,
  PHPUNIT,
  SUREFIRE,
  GRADLE,
  DOTNET,
  CTEST,
  ...JS_RUNNERS,
];

/**
 * The runners whose output the log looks like (each one's `detect`, all read in one pass):
 * text as it is given, or a log's cleaned windows.
 */
export function detectRunners(log: string | LogWindows, runners: readonly Runner[] = RUNNERS): Runner[] {
  return checksHolding(log, runners, (r) => r.detect);
}
