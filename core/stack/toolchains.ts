/**
 * The toolchains a repository can ask its sandbox for (`CHALK_TOOLCHAIN`): a fixed list, so a
 * repository names one and never says how it is installed. Which packages make each one is the
 * Sandbox provider's (plugins/sandbox-docker/toolchain-packages.ts: Debian packages); what each
 * puts on the PATH is here, so `chalk doctor` can say which toolchain adds a missing command.
 */
export const TOOLCHAINS = [
  {
    name: 'python',
    label: 'Python 3 with pytest, pip and venv',
    commands: ['python3', 'python', 'pytest', 'pip', 'pip3'],
  },
  { name: 'go', label: 'Go (with gcc for cgo)', commands: ['go', 'gofmt'] },
  { name: 'rust', label: 'Rust with cargo', commands: ['cargo', 'rustc', 'rustdoc'] },
  { name: 'ruby', label: 'Ruby with Bundler and Rake', commands: ['ruby', 'bundle', 'bundler', 'gem', 'rake'] },
  { name: 'java', label: 'a Java JDK', commands: ['java', 'javac'] },
  { name: 'maven', label: 'a Java JDK with Maven', commands: ['mvn'] },
  { name: 'gradle', label: 'a Java JDK with Gradle', commands: ['gradle'] },
  { name: 'php', label: 'PHP with Composer', commands: ['php', 'composer'] },
  { name: 'dotnet', label: 'the .NET SDK', commands: ['dotnet'] },
  {
    name: 'cpp',
    label: 'C and C++ with CMake and make',
    commands: ['cmake', 'ctest', 'make', 'gcc', 'g++', 'cc', 'c++'],
  },
] as const;

export type ToolchainName = (typeof TOOLCHAINS)[number]['name'];

export const TOOLCHAIN_NAMES: readonly ToolchainName[] = TOOLCHAINS.map((t) => t.name);

export const isToolchain = (name: string): name is ToolchainName =>
  (TOOLCHAIN_NAMES as readonly string[]).includes(name);

/** The toolchain that puts `command` on the PATH, or null when none of them does. */
export function toolchainProviding(command: string): ToolchainName | null {
  for (const t of TOOLCHAINS) if ((t.commands as readonly string[]).includes(command)) return t.name;
  return null;
}

/** `CHALK_TOOLCHAIN`'s value as a list: comma- or space-separated, each once, in order. */
export function toolchainList(value: string): string[] {
  return [...new Set(value.split(/[\s,]+/).filter(Boolean))];
}

const BUILTINS = new Set(['cd', 'export', 'set', 'true', 'false', 'test', '[', 'echo', 'source', '.', 'exit', ':']);
const PREFIXES = new Set(['env', 'exec', 'command', 'time', 'nice', 'xvfb-run']);

/**
 * The programs a shell command line runs, one per command of a `&&`, `||`, `;` or `|` list:
 * past leading `NAME=value` assignments and `env`/`exec`/`time` prefixes, quotes removed, shell
 * builtins left out. What cannot be looked up without the clone is left out too: a path
 * (`./gradlew`), an expansion (`$X`), a subshell.
 */
export function programsOf(commandLine: string): string[] {
  const found: string[] = [];
  for (const segment of commandLine.split(/&&|\|\||;|\|/)) {
    const program = firstWord(segment);
    if (program && !BUILTINS.has(program) && !found.includes(program)) found.push(program);
  }
  return found;
}

function firstWord(segment: string): string | null {
  for (const raw of segment.trim().split(/\s+/)) {
    const word = raw.replace(/^(['"])(.*)\1$/, '$2');
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(word)) continue;
    if (PREFIXES.has(word)) continue;
    if (word === '' || /[/$`(){}<>*?\\]/.test(word) || word.startsWith('-')) return null;
    return word;
  }
  return null;
}
