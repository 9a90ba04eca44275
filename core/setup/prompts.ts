import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../errors.js';
import { writeRepoFile } from '../fs/repo-file.js';
import { SHARE_DIR } from '../paths.js';
import { CALL_KINDS, type CallKind } from '../ports/agent.js';

/**
 * The prompt each agent call is asked with: the one mapping from call kinds
 * (core/ports/agent.ts) to prompt names. A call kind without a prompt does not
 * compile; `plan` (chalk fleet) asks with the `breakdown` prompt.
 */
export const CALL_PROMPTS = {
  continue: 'continue',
  retry: 'retry',
  'fix-review': 'fix-review',
  'spec-check': 'spec-check',
  review: 'review',
  distill: 'distill',
  plan: 'breakdown',
} as const satisfies Record<CallKind, string>;

/**
 * Every prompt: `system` (every sandboxed call's system prompt), then each call
 * kind's, in the order of CALL_KINDS (the prompt-set hash reads them in this order).
 */
export type PromptName = 'system' | (typeof CALL_PROMPTS)[CallKind];
export const PROMPT_NAMES: readonly PromptName[] = ['system', ...CALL_KINDS.map((kind) => CALL_PROMPTS[kind])];

export interface PromptStatus {
  name: PromptName;
  overridden: boolean;
  path: string;
}

/** Each shipped prompt and whether the repository overrides it in `.chalk/prompts/`. */
export function listPrompts(root: string): PromptStatus[] {
  return PROMPT_NAMES.map((name) => {
    const override = join('.chalk', 'prompts', `${name}.md`);
    const overridden = existsSync(join(root, override));
    return { name, overridden, path: overridden ? override : join(SHARE_DIR, 'prompts', `${name}.md`) };
  });
}

/** Copies a shipped prompt into `.chalk/prompts/NAME.md` for the repository to edit. */
export function ejectPrompt(root: string, name: string): string {
  if (!(PROMPT_NAMES as readonly string[]).includes(name)) {
    throw new UserError(`no prompt named '${name}'; choose one of: ${PROMPT_NAMES.join(', ')}`, 2);
  }
  const rel = join('.chalk', 'prompts', `${name}.md`);
  const text = readFileSync(join(SHARE_DIR, 'prompts', `${name}.md`), 'utf8');
  if (writeRepoFile(root, rel, text, { ifExists: 'keep' }) === 'kept')
    throw new UserError(`${rel} already exists; edit it, or delete it to eject the shipped one again`);
  return rel;
}
