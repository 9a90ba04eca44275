import { z } from 'zod';

/**
 * The part of the Anthropic Messages API request the fake model server checks.
 * A request that breaks it is refused with a 400 and recorded as a violation,
 * so a change in what the CLI sends fails the tests instead of passing silently.
 */

const textBlock = z.object({ type: z.literal('text'), text: z.string() }).loose();
const toolUseBlock = z
  .object({
    type: z.literal('tool_use'),
    id: z.string().min(1),
    name: z.string().min(1),
    input: z.record(z.string(), z.unknown()),
  })
  .loose();
const toolResultBlock = z
  .object({
    type: z.literal('tool_result'),
    tool_use_id: z.string().min(1),
    content: z.union([z.string(), z.array(z.object({ type: z.string() }).loose())]).optional(),
    is_error: z.boolean().optional(),
  })
  .loose();
const KNOWN = ['text', 'tool_use', 'tool_result'];
const otherBlock = z
  .object({ type: z.string().refine((t) => !KNOWN.includes(t), 'a known block type with a wrong shape') })
  .loose();
const block = z.union([textBlock, toolUseBlock, toolResultBlock, otherBlock]);

const message = z.object({
  role: z.enum(['user', 'assistant', 'system']),
  content: z.union([z.string(), z.array(block).min(1)]),
});

const toolDef = z.union([
  z.object({ name: z.string().min(1), input_schema: z.object({ type: z.literal('object') }).loose() }).loose(),
  // Server tools (web search and the like) carry a versioned type instead of a schema.
  z.object({ type: z.string().min(1), name: z.string().min(1) }).loose(),
]);

export const messagesRequest = z
  .object({
    model: z.string().min(1),
    max_tokens: z.number().int().positive(),
    messages: z.array(message).min(1),
    system: z.union([z.string(), z.array(textBlock)]).optional(),
    tools: z.array(toolDef).optional(),
    stream: z.boolean().optional(),
  })
  .loose();

export type MessagesRequest = z.infer<typeof messagesRequest>;
type Msg = MessagesRequest['messages'][number];
type AnyBlock = z.infer<typeof block>;

export interface ToolResult {
  toolUseId: string;
  content: string;
  isError: boolean;
}

const blocksOf = (m: Msg): AnyBlock[] => (typeof m.content === 'string' ? [] : m.content);

const resultText = (b: AnyBlock): string => {
  const c = (b as { content?: unknown }).content;
  if (typeof c === 'string') return c;
  if (Array.isArray(c)) return c.map((x) => (typeof x?.text === 'string' ? x.text : '')).join('');
  return '';
};

/**
 * Checks the request's shape and its tool bookkeeping: every tool_use of an
 * assistant message is answered by a tool_result in the next user message,
 * and every tool_result answers a tool_use of the message just before.
 * Returns the problems found (empty when the request is sound).
 */
export function checkRequest(
  headers: Record<string, string | string[] | undefined>,
  body: unknown,
): { problems: string[]; request?: MessagesRequest } {
  const problems: string[] = [];
  if (!headers['anthropic-version']) problems.push('missing anthropic-version header');
  if (!headers['x-api-key'] && !headers.authorization) problems.push('missing x-api-key or authorization header');
  const parsed = messagesRequest.safeParse(body);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) problems.push(`${issue.path.join('.') || 'body'}: ${issue.message}`);
    return { problems };
  }
  const req = parsed.data;
  const convo = req.messages.filter((m) => m.role !== 'system');
  if (convo[0]?.role !== 'user') problems.push('the conversation must start with a user message');
  const names = new Set((req.tools ?? []).map((t) => t.name));
  let pending: string[] = [];
  for (const [i, m] of convo.entries()) {
    const blocks = blocksOf(m);
    if (m.role === 'assistant') {
      if (pending.length) problems.push(`messages ${i}: tool_use ${pending.join(', ')} got no tool_result`);
      pending = [];
      for (const b of blocks) {
        if (b.type !== 'tool_use') continue;
        const tu = b as z.infer<typeof toolUseBlock>;
        pending.push(tu.id);
        if (names.size && !names.has(tu.name)) problems.push(`messages ${i}: tool_use of unknown tool ${tu.name}`);
      }
    } else {
      const answered = blocks
        .filter((b) => b.type === 'tool_result')
        .map((b) => (b as { tool_use_id: string }).tool_use_id);
      for (const id of answered) {
        if (!pending.includes(id)) problems.push(`messages ${i}: tool_result for unknown tool_use ${id}`);
      }
      const missing = pending.filter((id) => !answered.includes(id));
      if (missing.length) problems.push(`messages ${i}: tool_use ${missing.join(', ')} got no tool_result`);
      pending = [];
    }
  }
  if (pending.length) problems.push(`the last message leaves tool_use ${pending.join(', ')} unanswered`);
  if (convo[convo.length - 1]?.role !== 'user') problems.push('the last message must be a user message');
  return { problems, request: req };
}

/** The tool results carried by the request's last user message. */
export function lastToolResults(req: MessagesRequest): ToolResult[] {
  const last = req.messages.filter((m) => m.role === 'user').at(-1);
  if (!last) return [];
  return blocksOf(last)
    .filter((b) => b.type === 'tool_result')
    .map((b) => ({
      toolUseId: (b as { tool_use_id: string }).tool_use_id,
      content: resultText(b),
      isError: (b as { is_error?: boolean }).is_error === true,
    }));
}

/** The text of the first user message (where the prompt given on stdin lands). */
export function firstUserText(req: MessagesRequest): string {
  const first = req.messages.find((m) => m.role === 'user');
  if (!first) return '';
  if (typeof first.content === 'string') return first.content;
  return first.content.map((b) => (b.type === 'text' ? (b as { text: string }).text : '')).join('\n');
}
