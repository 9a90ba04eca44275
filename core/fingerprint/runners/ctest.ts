import { anyLine } from './detect.js';
import { idsInSections } from './lines.js';
import type { Runner } from './types.js';

/**
 * CTest: the list after `The following tests FAILED:`, `\t  2 - adds (Failed)`,
 * `\t  3 - crashes (SEGFAULT)`. The ID is the test's name as add_test gave it.
 */
export const CTEST: Runner = {
  name: 'ctest',
  detect: anyLine(/^Test project \//m, /^[0-9]+% tests passed, [0-9]+ tests? failed/m),
  failingTests: (log) =>
    idsInSections(log, {
      opens: /^The following tests (FAILED|did not run):$/,
      counts: (m) => m[1] === 'FAILED',
      closes: /^(Errors while running CTest|\S)/,
      item: /^\s+[0-9]+ - (.+?) \([^()]+\)$/,
    }),
  errorLine: [/: Assertion .+ failed\.$/], // assert(3): `calc_test: calc_test.c:5: main: Assertion `add(1, 2) == 4' failed.`
  banner: [
    /^The following tests (FAILED|did not run):$/,
    /^Errors while running CTest$/,
    /^[0-9]+% tests passed/,
    /^Test project /,
    /^\s*[0-9]+\/[0-9]+ Test\s+#[0-9]+: /,
    /^\s*Start\s+[0-9]+: /,
    /^Total Test time/,
  ],
  reportHint: 'ctest --output-junit test-report.xml (CMake 3.21+), and CHALK_TEST_REPORT=<build dir>/test-report.xml',
};
