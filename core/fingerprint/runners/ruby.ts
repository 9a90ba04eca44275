import { logLines } from '../log.js';
import { anyLine } from './detect.js';
import { idsFromLines, orNull } from './lines.js';
import type { Runner } from './types.js';

/**
 * RSpec: the `Failed examples:` list, `rspec ./spec/calc_spec.rb:5 # Calc adds`. The ID is
 * `spec/calc_spec.rb::Calc adds` (the line number left out: it moves with every edit above it).
 */
export const RSPEC: Runner = {
  name: 'rspec',
  detect: anyLine(/^[0-9]+ examples?, [0-9]+ failures?/m, /^Failed examples:$/m),
  failingTests: (log) =>
    idsFromLines(log, [
      {
        pattern: /^rspec (?:\.\/)?(\S+?)(?::[0-9]+|\[[0-9:]+\])? # (.+?)\s*$/,
        id: (m) => `${m[1]}::${m[2]}`,
      },
    ]),
  errorLine: [/^\s+Failure\/Error: \S/],
  banner: [/^Failures:$/, /^Failed examples:$/, /^[0-9]+ examples?, [0-9]+ failures?/, /^rspec \S+ # /],
  reportHint:
    'the rspec_junit_formatter gem: rspec --format progress --format RspecJunitFormatter --out test-report.xml, and CHALK_TEST_REPORT=test-report.xml',
};

/**
 * Minitest: after `  1) Failure:` comes `CalcTest#test_add [test/calc_test.rb:6]:`, after
 * `  2) Error:` comes `CalcTest#test_raise:`. The ID is `Class#method`.
 */
export const MINITEST: Runner = {
  name: 'minitest',
  detect: anyLine(/^[0-9]+ runs, [0-9]+ assertions, [0-9]+ failures, [0-9]+ errors/m),
  failingTests: (log) => {
    const ids: string[] = [];
    const lines = logLines(log);
    for (let i = 1; i < lines.length; i++) {
      if (!/^\s+[0-9]+\) (Failure|Error):$/.test(lines[i - 1] ?? '')) continue;
      const m = /^(\S+?#\S+?)(?: \[[^\]]*\])?:$/.exec(lines[i] ?? '');
      if (m?.[1]) ids.push(m[1]);
    }
    return orNull(ids);
  },
  errorLine: [
    /^[A-Z]\w*(::\w+)*(Error|Exception): \S/, // an error: `RuntimeError: boom`
    /^Expected\b.+/, // a failed assertion: `Expected: 4`, `Expected false to be truthy.`
  ],
  banner: [/^\s*[0-9]+\) (Failure|Error):$/, /^[0-9]+ runs, /, /^Run options: /, /^# Running:$/, /^Finished in /],
  reportHint:
    "minitest-reporters' JUnitReporter (Minitest::Reporters.use! Minitest::Reporters::JUnitReporter.new), and CHALK_TEST_REPORT naming the file it writes under test/reports/",
};
