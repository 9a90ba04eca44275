import { anyLine } from './detect.js';
import { idsFromLines } from './lines.js';
import type { Runner } from './types.js';

/**
 * dotnet test (VSTest console logger): `  Failed CalcTests.CalcTest.Add [12 ms]`, theories as
 * `  Failed CalcTests.CalcTest.Sum(a: 1, b: 2) [1 ms]`. The ID is the fully qualified test name.
 */
export const DOTNET: Runner = {
  name: 'dotnet test',
  detect: anyLine(/^(Failed|Passed)!\s+- Failed:/m, /^\s*Total tests: [0-9]+/m),
  failingTests: (log) => idsFromLines(log, [{ pattern: /^\s+Failed (\S.*?) \[[^\]]*\]\s*$/ }]),
  errorLine: [
    /^\s+Assert\.\w+\(\) Failure/, // xUnit: `Assert.Equal() Failure`
    /^\s+[A-Z][\w.]*(Exception|Error) : .+/, // xUnit: `System.InvalidOperationException : boom`
    /^\s+Assert\.\w+ failed\. .+/, // MSTest: `Assert.AreEqual failed. Expected:<4>. Actual:<3>.`
    /^\s+Expected: .+/, // NUnit: `  Expected: 4`
  ],
  banner: [
    /^\[xUnit\.net [^\]]*\] .*\[FAIL\]$/, // xUnit's own progress line, before the console logger's
    /^\s*Error Message:$/,
    /^\s*Stack Trace:$/,
    /^(Failed|Passed)!\s+- /,
    /^Test Run Failed\.$/,
    /^\s*Total tests: /,
    /^\s*Failed \S.* \[[^\]]*\]\s*$/,
  ],
  reportHint:
    "dotnet test --logger 'trx;LogFileName=test-report.trx' --results-directory . (or JunitXml.TestLogger's --logger 'junit;LogFilePath=test-report.xml'), and CHALK_TEST_REPORT naming that file",
};
