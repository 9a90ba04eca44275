import { NON_SPACE as N, SPACE as S } from '../log.js';
import { anyLine } from './detect.js';
import { idsFromLines, splitReportId, unique } from './lines.js';
import type { Runner } from './types.js';

/** go test's flags that take the next word as their value. */
const GO_VALUE_FLAGS = [
  '-run',
  '-skip',
  '-count',
  '-timeout',
  '-p',
  '-parallel',
  '-tags',
  '-coverprofile',
  '-covermode',
  '-coverpkg',
  '-bench',
  '-benchtime',
  '-cpu',
  '-o',
  '-exec',
  '-ldflags',
  '-gcflags',
  '-asmflags',
  '-mod',
  '-modfile',
  '-pkgdir',
  '-toolexec',
  '-shuffle',
  '-vet',
  '-fuzz',
  '-fuzztime',
  '-outputdir',
  '-blockprofile',
  '-cpuprofile',
  '-memprofile',
  '-mutexprofile',
  '-trace',
  '-C',
];

/**
 * go test: `--- FAIL: TestAdd (0.00s)`, subtests indented as `    --- FAIL: TestTable/case_1 (0.00s)`.
 * The ID is the test's name (the package is not on the line).
 */
export const GO: Runner = {
  name: 'go test',
  detect: anyLine(new RegExp(`^${S}*--- FAIL: `, 'm'), /^FAIL\t\S+/m),
  failingTests: (log) => idsFromLines(log, [{ pattern: new RegExp(`^${S}*--- FAIL: (${N}+)`) }]),
  errorLine: [
    /^\s+\S+\.go:[0-9]+: \S/, // t.Errorf / t.Fatalf: `    calc_test.go:8: Add(1, 2) = 3, want 4`
    /^panic: \S/, // a panicking test
    /^\S+\.go:[0-9]+:[0-9]+: \S/, // a build error: `./calc.go:5:2: undefined: x`
  ],
  banner: [
    new RegExp(`^${S}*--- FAIL: `),
    /^FAIL$/,
    /^FAIL /,
    /^=== (RUN|PAUSE|CONT|NAME)/,
    /^exit status [0-9]+$/,
    /^ok\s+\S+/,
  ],
  reportHint: 'go test -json ./... > test-report.jsonl in the rubric, and CHALK_TEST_REPORT=test-report.jsonl',
  // `go test PKGS -run '^(TestA|TestB)$' -count=1`: the failing top-level tests, in the packages
  // the report names (else the command's own), never from the test cache.
  select: {
    commands: [['go', 'test']],
    valueOptions: GO_VALUE_FLAGS,
    args: ({ ids, report, positionals }) => {
      const parts = ids.map((id) => (report ? splitReportId(id) : { file: '', name: id }));
      const tops = unique(parts.map((p) => p.name.split('/')[0] as string));
      if (!tops.every((t) => /^(?:Test|Example|Fuzz)[A-Za-z0-9_]*$/.test(t))) return null;
      const pkgs = unique(parts.map((p) => p.file));
      const known = report && pkgs.every((p) => /^[A-Za-z0-9_.~/-]+$/.test(p) && !p.startsWith('-'));
      return { args: [...(known ? pkgs : positionals), '-run', `^(${tops.join('|')})$`, '-count=1'] };
    },
  },
};
