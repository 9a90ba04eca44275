import { CORE, CORE_TABLE, type KeyTable } from './table.js';

/**
 * The commented `.chalk/config` that `chalk init` writes: every repository key of the
 * table (core's, then each plugin's under its name) with its help line and default, so the
 * template and the defaults never disagree. What `chalk init` found in the repository (`found`)
 * is written set, with the file it came from.
 */
export function configTemplate(
  table: KeyTable = CORE_TABLE,
  found: Readonly<Record<string, { value: string; from: string }>> = {},
): string {
  const lines = [
    '# Chalk settings for this repository: KEY=value lines, no quotes, never executed.',
    '# The environment wins over this file; an empty environment value means the default.',
    "# A limit set here above this machine's CHALK_CEILING_* for it is held to that ceiling.",
    '# `chalk config` shows every effective value and where it came from.',
    '',
  ];
  let declarer = CORE;
  for (const k of table.filter((k) => k.scope === 'repo' && k.inTemplate !== false)) {
    if (k.plugin !== declarer) {
      declarer = k.plugin;
      lines.push(`# --- plugin ${declarer} ---`, '');
    }
    lines.push(`# ${k.help}`);
    const f = found[k.name];
    if (f) {
      lines.push(`# (chalk init found this in ${f.from})`, `${k.name}=${f.value}`, '');
      continue;
    }
    const setHere = k.name === 'CHALK_TEST_CMD' || k.name === 'CHALK_SETUP_CMD';
    lines.push(`${setHere ? '' : '# '}${k.name}=${k.default}`, '');
  }
  return lines.join('\n');
}
