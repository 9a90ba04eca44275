/**
 * A large pytest-like rubric log (`-v`, colour codes included), for bench/fingerprint.mjs
 * and the fingerprint's equivalence test: progress lines, then a FAILURES section with one
 * traceback per failing test, then the short summary. Tests are in files of 50; test i
 * fails when i % 5 == 3, so about one in five fails.
 */
export interface PytestLog {
  text: string;
  tests: number;
  failing: number;
}

/** A log of at least `mb` MiB (its characters are ASCII: one byte each). */
export function pytestLog(mb: number, root = '/work/repo'): PytestLog {
  const target = mb * 1024 * 1024;
  const progress: string[] = [];
  const failures: string[] = [];
  const summary: string[] = [];
  let size = 0;
  for (let i = 0; size < target; i++) {
    const file = `tests/test_mod_${Math.floor(i / 50)}.py`;
    const id = `${file}::test_case_${i}`;
    const fails = i % 5 === 3;
    const line = `${id} \u001b[31m${fails ? 'FAILED' : '\u001b[32mPASSED'}\u001b[0m ${' '.repeat(20)}[ ${i % 100}%]\n`;
    progress.push(line);
    size += line.length;
    if (!fails) continue;
    const block =
      `\u001b[1m\u001b[31m_______________________________ test_case_${i} ________________________________\u001b[0m\n\n` +
      `    def test_case_${i}():\n        value = compute(${i})\n>       assert value == ${i + 1}\n` +
      `\u001b[1m\u001b[31mE       assert ${i} == ${i + 1}\u001b[0m\n\u001b[1m\u001b[31mE        +  where ${i} = compute(${i})\u001b[0m\n\n` +
      `${file}:${10 + (i % 50) * 4}: AssertionError\n`;
    failures.push(block);
    const s = `FAILED ${id} - assert ${i} == ${i + 1}\n`;
    summary.push(s);
    size += block.length + s.length;
  }
  const head = `============================= test session starts ==============================\nplatform linux -- Python 3.11.2, pytest-7.2.1, pluggy-1.0.0\nrootdir: ${root}\ncollected ${progress.length} items\n\n`;
  const tail = `======================= ${summary.length} failed, ${progress.length - summary.length} passed in 123.45s =======================\n`;
  const text = `${head}${progress.join('')}\n=================================== FAILURES ===================================\n${failures.join('')}=========================== short test summary info ============================\n${summary.join('')}${tail}`;
  return { text, tests: progress.length, failing: summary.length };
}
