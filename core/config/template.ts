import { KEYS } from './keys.js';

/**
 * The commented `.chalk/config` that `chalk init` writes: every repository key
 * with its help line and default, so the template and the defaults never disagree.
 */
export function configTemplate(): string {
  const lines = [
    '# Chalk settings for this repository: KEY=value lines, no quotes, never executed.',
    '# The environment wins over this file; an empty environment value means the default.',
    '# `chalk config` shows every effective value and where it came from.',
    '',
  ];
  for (const k of KEYS.filter((k) => k.scope === 'repo' && k.inTemplate !== false)) {
    lines.push(`# ${k.help}`);
    const setHere = k.name === 'CHALK_TEST_CMD' || k.name === 'CHALK_SETUP_CMD';
    lines.push(`${setHere ? '' : '# '}${k.name}=${k.default}`, '');
  }
  return lines.join('\n');
}
