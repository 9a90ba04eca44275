import type { ToolchainName } from '../../core/host.js';
import { UserError } from '../../core/plugin.js';

/**
 * The Debian (bookworm) packages of each toolchain core names (core/stack/toolchains.ts),
 * installed with apt on top of the default sandbox image. A fixed table: a repository picks
 * toolchains by name and extra packages by Debian name, never a command or a URL.
 * tests/unit/sandbox-image-plan.test.ts holds the two lists equal.
 */
export const TOOLCHAIN_PACKAGES: Readonly<Record<ToolchainName, readonly string[] | { unavailable: string }>> = {
  python: ['python3', 'python3-pytest', 'python3-venv', 'python3-pip'],
  // cgo (the default for `go test`) needs a C compiler.
  go: ['golang-go', 'gcc', 'libc6-dev'],
  rust: ['cargo', 'rustc'],
  ruby: ['ruby', 'ruby-dev', 'bundler', 'rake'],
  java: ['default-jdk-headless'],
  maven: ['default-jdk-headless', 'maven'],
  gradle: ['default-jdk-headless', 'gradle'],
  php: ['php-cli', 'composer', 'php-xml', 'php-mbstring'],
  dotnet: {
    unavailable:
      'Debian bookworm has no .NET SDK package; give the sandbox an image with one in .devcontainer/devcontainer.json (e.g. built FROM mcr.microsoft.com/dotnet/sdk), or set CHALK_IMAGE',
  },
  cpp: ['build-essential', 'cmake'],
};

/** The packages of `toolchains` and `extra`, sorted and each once; throws the unavailable toolchain's line. */
export function packagesFor(toolchains: readonly ToolchainName[], extra: readonly string[]): string[] {
  const out = new Set<string>(extra);
  for (const t of toolchains) {
    const p = TOOLCHAIN_PACKAGES[t];
    if ('unavailable' in p) throw new UserError(`CHALK_TOOLCHAIN=${t}: ${p.unavailable}`);
    for (const name of p) out.add(name);
  }
  return [...out].sort();
}
