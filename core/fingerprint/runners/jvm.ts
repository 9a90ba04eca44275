import { logLines } from '../log.js';
import { anyLine } from './detect.js';
import { idsFromLines, orNull } from './lines.js';
import type { Runner } from './types.js';

/** A Java/Kotlin exception line: `java.lang.AssertionError: expected:<4> but was:<3>`, `org.opentest4j.AssertionFailedError: ...`. */
const JAVA_EXCEPTION = /^\s*[a-z][\w$]*(\.[\w$]+)*\.[A-Z][\w$]*(Error|Exception|Failure|Throwable)(: .*| at \S+)?$/;

/**
 * Maven Surefire (`mvn test`, `mvn -B test`), as each version names a failing case:
 * - 2.x with JUnit 4: `[ERROR] testAdd(com.example.CalcTest)  Time elapsed: 0.003 s  <<< FAILURE!`
 * - 3.x: `[ERROR] com.example.CalcTest.testAdd -- Time elapsed: 0.003 s <<< FAILURE!`
 * - 2.x with JUnit 5: `[ERROR] testAdd  Time elapsed: ...` (the class from the `Running` line before it).
 * The ID is `class::method`, as the JUnit XML report Surefire writes names it.
 */
export const SUREFIRE: Runner = {
  name: 'maven surefire',
  detect: anyLine(/^\[(INFO|ERROR)\] (T E S T S|Tests run: )/m, /<<< (FAILURE|ERROR)!$/m),
  failingTests: (log) => {
    const ids: string[] = [];
    let running = '';
    for (const line of logLines(log)) {
      const run = /^\[INFO\] Running (\S+)$/.exec(line);
      if (run?.[1]) {
        running = run[1];
        continue;
      }
      if (!/\s<<< (FAILURE|ERROR)!$/.test(line) || /^\[ERROR\] Tests run: /.test(line)) continue;
      const v2 = /^\[ERROR\] ([\w$]+)\(([\w$.]+)\)\s+Time elapsed:/.exec(line);
      if (v2) {
        ids.push(`${v2[2]}::${v2[1]}`);
        continue;
      }
      const v3 = /^\[ERROR\] ([\w$.]+)\.([\w$]+)(?:\(\))?\s+(?:-- )?Time elapsed:/.exec(line);
      if (v3) {
        ids.push(`${v3[1]}::${v3[2]}`);
        continue;
      }
      const bare = /^\[ERROR\] ([\w$]+)(?:\(\))?\s+(?:-- )?Time elapsed:/.exec(line);
      if (bare?.[1]) ids.push(running === '' ? bare[1] : `${running}::${bare[1]}`);
    }
    return orNull(ids);
  },
  errorLine: [JAVA_EXCEPTION],
  banner: [
    /^\[ERROR\] Tests run: /,
    /^\[ERROR\] .*<<< (FAILURE|ERROR)!$/,
    /^\[ERROR\] (Failures|Errors): ?$/,
    /^\[ERROR\]\s*$/,
    /^\[ERROR\] (Failed to execute goal|There are test failures|Please refer to|To see the full stack trace|Re-run Maven|For more information|-> \[Help|\[Help [0-9]+\])/,
    /^\[(INFO|ERROR)\] BUILD FAILURE$/,
  ],
  reportHint:
    'Surefire already writes JUnit XML: CHALK_TEST_REPORT=target/surefire-reports/TEST-<class>.xml (one file per test class)',
};

/**
 * Gradle's console (`gradle test`, default test logging): `com.example.CalcTest > testAdd FAILED`,
 * JUnit 5 as `CalcTest > testAdd() FAILED`, nested classes as `Outer > Inner > test() FAILED`.
 * The ID is `class::test` (the trailing `()` dropped, nested names joined with ` > `).
 */
export const GRADLE: Runner = {
  name: 'gradle',
  detect: anyLine(/^[0-9]+ tests? completed, [0-9]+ failed/m, /^> Task :\S*test\b/m),
  failingTests: (log) =>
    idsFromLines(log, [
      {
        pattern: /^([\w$.]+) > (.+?) FAILED$/,
        id: (m) => `${m[1]}::${(m[2] ?? '').replace(/\(\)$/, '')}`,
      },
    ]),
  errorLine: [JAVA_EXCEPTION],
  banner: [
    /^> Task \S+ FAILED$/,
    /^FAILURE: Build failed/,
    /^\* What went wrong:$/,
    /^Execution failed for task/,
    /^> There were failing tests/,
    /^[0-9]+ tests? completed, [0-9]+ failed/,
    /^BUILD FAILED in /,
    /^[\w$.]+ > .+ FAILED$/,
  ],
  reportHint:
    'Gradle already writes JUnit XML: CHALK_TEST_REPORT=build/test-results/test/TEST-<class>.xml (one file per test class)',
};
