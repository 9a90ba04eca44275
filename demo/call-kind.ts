import { firstUserText, type MessagesRequest } from './model-protocol.js';

/**
 * Which Chalk call a CLI session is, told from the schema of its
 * StructuredOutput tool (the `--json-schema` Chalk passed): a loop answers a
 * `status`, the spec check `problems`, the review `findings`, a distillation
 * a `lesson`. Scripted models use it to hand each session a script of its kind.
 */
export type CallKind = 'loop' | 'spec' | 'review' | 'lesson' | 'other';

export function callKind(req: Pick<MessagesRequest, 'tools'>): CallKind {
  const so = req.tools?.find((t) => t.name === 'StructuredOutput') as { input_schema?: { properties?: object } };
  const props = Object.keys(so?.input_schema?.properties ?? {});
  if (props.includes('status')) return 'loop';
  if (props.includes('problems')) return 'spec';
  if (props.includes('findings')) return 'review';
  if (props.includes('lesson')) return 'lesson';
  return 'other';
}

/** The prompt a session started with. */
export const promptOf = (req: MessagesRequest): string => firstUserText(req);
