/**
 * What a scripted model says, one assistant message per request of the
 * conversation. A script is consumed in order by one CLI session; the builders
 * below name the tools the real `claude` CLI offers (Bash, Write, Edit and, when
 * `--json-schema` is given, StructuredOutput).
 */

export type Block = { type: 'text'; text: string } | { type: 'tool_use'; name: string; input: Record<string, unknown> };

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
}

export interface Step {
  /** The assistant message's content. */
  blocks: Block[];
  /** Wait this long before answering (the CLI sees a slow model). */
  sleepMs?: number;
  /** Usage to report; large numbers make the CLI's cost exceed --max-budget-usd. */
  usage?: Usage;
  /** Send this raw body (with this HTTP status) instead of a well-formed message. */
  raw?: { status: number; body: string; contentType?: string };
}

export type Script = Step[];

export const text = (t: string): Block => ({ type: 'text', text: t });
export const tool = (name: string, input: Record<string, unknown>): Block => ({ type: 'tool_use', name, input });

/** One message that runs a shell command through the CLI's Bash tool. */
export const bash = (command: string, extra: Partial<Step> = {}): Step => ({
  blocks: [tool('Bash', { command, description: 'scripted command' })],
  ...extra,
});

/** One message that writes a whole file through the CLI's Write tool. */
export const write = (filePath: string, content: string, extra: Partial<Step> = {}): Step => ({
  blocks: [tool('Write', { file_path: filePath, content })],
  ...extra,
});

/** One message that reads a file (the Edit tool refuses files not read first). */
export const read = (filePath: string): Step => ({ blocks: [tool('Read', { file_path: filePath })] });

/** One message that replaces text in a file through the CLI's Edit tool (read the file first). */
export const edit = (filePath: string, oldString: string, newString: string): Step => ({
  blocks: [tool('Edit', { file_path: filePath, old_string: oldString, new_string: newString })],
});

/** One message that hands the structured answer back through the StructuredOutput tool. */
export const answer = (value: Record<string, unknown>, extra: Partial<Step> = {}): Step => ({
  blocks: [tool('StructuredOutput', value)],
  ...extra,
});

/** One plain-text message that ends the turn. */
export const say = (t: string, extra: Partial<Step> = {}): Step => ({ blocks: [text(t)], ...extra });

/** A loop that finishes checkpoint `checkpoint`. */
export const loopDone = (checkpoint: string, summary: string): Step =>
  answer({ status: 'done', checkpoint, summary, blocker: '' });

/** A loop that reports a blocker. */
export const loopBlocked = (blocker: string): Step =>
  answer({ status: 'blocked', checkpoint: '', summary: 'blocked', blocker });

/** Usage big enough that any model's list price exceeds a few dollars for one message. */
export const HUGE_USAGE: Usage = { input_tokens: 5_000_000, output_tokens: 500_000 };
