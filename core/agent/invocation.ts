import type { CallKind } from '../ports/agent.js';
import { answerJsonSchema } from './schemas.js';

/**
 * The `claude` command line for each call kind. Only flags and the answer
 * schema go on the command line: the prompt goes in on stdin and credentials
 * reach the CLI through its environment.
 */

export type Access = 'read' | 'write';
export type PermissionMode = 'auto' | 'bypass';

/** Read tools and read-only git: all a spec check, review or distillation may use. */
export const READ_ONLY_TOOLS = [
  'Read',
  'Grep',
  'Glob',
  'Bash(git diff *)',
  'Bash(git log *)',
  'Bash(git show *)',
  'Bash(git status *)',
] as const;

export function accessOf(kind: CallKind): Access {
  switch (kind) {
    case 'continue':
    case 'retry':
    case 'fix-review':
      return 'write';
    case 'spec-check':
    case 'review':
    case 'distill':
    // The fleet's breakdown runs in a sandbox too, reading the repository (core/fleet/plan-call.ts).
    case 'plan':
      return 'read';
  }
}

/** The configuration the command line depends on (CHALK_* keys). */
export interface AgentSettings {
  budgetUsd: string;
  /** CHALK_AGENT_TIMEOUT: seconds a call may take; absent, none. */
  timeoutS?: number;
  permissionMode: PermissionMode;
  model: string;
  cheapModel: string;
  reviewModel: string;
}

/** The model a kind asks for ('' means the CLI's default). */
export function modelFor(kind: CallKind, s: AgentSettings): string {
  if (accessOf(kind) === 'write' || kind === 'plan') return s.model;
  return kind === 'review' ? s.reviewModel : s.cheapModel;
}

export interface InvocationInput {
  kind: CallKind;
  settings: AgentSettings;
  /** The system prompt file as the CLI sees it. */
  systemPromptFile?: string;
  /** Overrides the kind's configured model. */
  model?: string;
}

export function buildInvocation(input: InvocationInput): string[] {
  const { kind, settings } = input;
  const access = accessOf(kind);
  const argv = [
    'claude',
    '-p',
    '--output-format',
    'json',
    '--json-schema',
    answerJsonSchema(kind),
    '--max-budget-usd',
    settings.budgetUsd,
  ];
  if (!input.systemPromptFile) throw new Error(`a ${kind} call needs a system prompt file`);
  argv.push('--append-system-prompt-file', input.systemPromptFile);
  const model = input.model ?? modelFor(kind, settings);
  if (model) argv.push('--model', model);
  if (access === 'read') {
    // The tool list is variadic, so it comes last.
    argv.push('--permission-mode', 'dontAsk', '--allowedTools', ...READ_ONLY_TOOLS);
  } else if (settings.permissionMode === 'bypass') {
    argv.push('--dangerously-skip-permissions');
  } else {
    argv.push('--permission-mode', 'auto');
  }
  return argv;
}

/** The `initialize` probe: asks which permission mode a loop would start in, sends no message, costs nothing. */
export function startModeInvocation(model: string): string[] {
  const argv = [
    'claude',
    '-p',
    '--input-format',
    'stream-json',
    '--output-format',
    'stream-json',
    '--verbose',
    '--no-session-persistence',
    '--permission-mode',
    'auto',
  ];
  if (model) argv.push('--model', model);
  return argv;
}

export const START_MODE_REQUEST = `${JSON.stringify({
  type: 'control_request',
  request_id: 'chalk-doctor',
  request: { subtype: 'initialize' },
})}\n`;

/** Quotes argv for a POSIX shell (`sh -c`), one single-quoted word per argument. */
export function shellQuote(argv: readonly string[]): string {
  return argv.map((a) => (/^[A-Za-z0-9_./:=@%+-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ');
}
