import { z } from 'zod';

/**
 * The vocabulary of a decision (decider protocol v1): a state and typed questions
 * about it. A question's id is the caller's key: it keys the wire request and
 * its answers, and the model never sees it.
 */

export const PROTOCOL_VERSION = 1;
/** How many questions Chalk's own questions (stuck, lesson rerank) put in one request. */
export const CHALK_MAX_QUESTIONS = 8;

const words = (what: string) => z.string().refine((s) => s.trim() !== '', { error: `${what} must not be blank` });

export const NoulQuestionSchema = z.object({
  type: z.literal('noul'),
  instructions: words('instructions'),
  /** What a true and a false answer mean: both sides or neither. */
  criteria: z.object({ true: words('criteria.true'), false: words('criteria.false') }).optional(),
});

export const ChoiceQuestionSchema = z.object({
  type: z.literal('choice'),
  instructions: words('instructions'),
  /** Option key -> description, in the order asked; at least 2 (the reference server refuses fewer). */
  criteria: z
    .record(words('an option key'), z.string())
    .refine((o) => Object.keys(o).length >= 2, { error: 'a choice needs at least 2 options' })
    .refine((o) => Object.keys(o).length <= 255, { error: 'a choice takes at most 255 options' }),
});

export const ScoreQuestionSchema = z.object({
  type: z.literal('score'),
  instructions: words('instructions'),
  /** Levels, lowest first: 2 to 10. */
  criteria: z
    .array(words('a level'))
    .min(2, { error: 'a score needs at least 2 levels' })
    .max(10, { error: 'a score takes at most 10 levels' }),
});

export const QuestionSchema = z.discriminatedUnion('type', [
  NoulQuestionSchema,
  ChoiceQuestionSchema,
  ScoreQuestionSchema,
]);

export type NoulQuestion = z.infer<typeof NoulQuestionSchema>;
export type ChoiceQuestion = z.infer<typeof ChoiceQuestionSchema>;
export type ScoreQuestion = z.infer<typeof ScoreQuestionSchema>;
export type Question = z.infer<typeof QuestionSchema>;
export type QuestionType = Question['type'];

/**
 * A question id: non-blank and not an array index, because a JSON object keeps
 * integer-like keys in numeric order, not in the order asked.
 */
const QuestionId = z
  .string()
  .refine((s) => s.trim() !== '', { error: 'a question id must not be blank' })
  .refine((s) => !/^(0|[1-9][0-9]*)$/.test(s), { error: 'a question id must not be a bare number' });

export const DecisionRequestSchema = z.object({
  /** The text the questions are about. Never empty. */
  state: z.string().refine((s) => s.trim() !== '', { error: 'the state must not be empty' }),
  questions: z
    .record(QuestionId, QuestionSchema)
    .refine((q) => Object.keys(q).length >= 1, { error: 'a request needs at least one question' }),
});

/** One request: every question about one state, keyed by the caller's ids, in the order asked. */
export type DecisionRequest = z.infer<typeof DecisionRequestSchema>;

export class DecisionRequestError extends Error {
  override name = 'DecisionRequestError';
}

function firstIssue(error: z.ZodError): string {
  let i = error.issues[0] as (z.core.$ZodIssue & { issues?: z.core.$ZodIssue[] }) | undefined;
  if (!i) return 'invalid';
  const path = i.path.length > 0 ? `${i.path.join('.')}: ` : '';
  // A record key's own error is nested under 'Invalid key in record'.
  if (i.code === 'invalid_key' && i.issues?.[0]) i = i.issues[0];
  return `${path}${i.message}`;
}

/** Validates a request; `maxQuestions` caps it (Chalk's own questions pass CHALK_MAX_QUESTIONS). */
export function decisionRequest(
  state: string,
  questions: Record<string, Question>,
  opts: { maxQuestions?: number } = {},
): DecisionRequest {
  const parsed = DecisionRequestSchema.safeParse({ state, questions });
  if (!parsed.success) throw new DecisionRequestError(`not a decision request: ${firstIssue(parsed.error)}`);
  const n = Object.keys(parsed.data.questions).length;
  if (opts.maxQuestions !== undefined && n > opts.maxQuestions) {
    throw new DecisionRequestError(`a request carries at most ${opts.maxQuestions} questions (got ${n})`);
  }
  return parsed.data;
}

/** Question builders, each validated when built. */
function build<T>(schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new DecisionRequestError(`not a question: ${firstIssue(parsed.error)}`);
  return parsed.data;
}

export const noul = (instructions: string, criteria?: { true: string; false: string }): NoulQuestion =>
  build(NoulQuestionSchema, { type: 'noul', instructions, ...(criteria ? { criteria } : {}) });

export const choice = (instructions: string, options: Record<string, string>): ChoiceQuestion =>
  build(ChoiceQuestionSchema, { type: 'choice', instructions, criteria: options });

export const score = (instructions: string, levels: string[]): ScoreQuestion =>
  build(ScoreQuestionSchema, { type: 'score', instructions, criteria: levels });
