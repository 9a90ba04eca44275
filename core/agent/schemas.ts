import { z } from 'zod';
import type { AnswerOf, CallKind } from '../ports/agent.js';

/**
 * The answer each call kind must give, as zod schemas. The same schemas give
 * the JSON Schema handed to the CLI (`--json-schema`) and validate what comes
 * back, so the two cannot drift apart.
 */

export const loopAnswer = z.object({
  status: z.enum(['done', 'blocked']),
  checkpoint: z.string().optional(),
  summary: z.string(),
  blocker: z.string().optional(),
});

export const specAnswer = z.object({
  verdict: z.enum(['pass', 'fail']),
  problems: z.array(
    z.object({
      checkpoint: z.string(),
      problem: z.string(),
      suggestion: z.string().optional(),
    }),
  ),
});

export const reviewAnswer = z.object({
  verdict: z.enum(['pass', 'fail']),
  summary: z.string(),
  findings: z.array(
    z.object({
      severity: z.enum(['blocker', 'minor']),
      file: z.string().optional(),
      issue: z.string(),
    }),
  ),
});

export const lessonAnswer = z.object({
  lesson: z.string(),
  scope: z.enum(['general', 'repo', 'none']),
});

export const planAnswer = z.object({
  workstreams: z.array(
    z.object({
      ticket: z.string(),
      title: z.string(),
      context: z.string().optional(),
      checkpoints: z.array(z.string()),
    }),
  ),
});

type Schemas = { [K in CallKind]: z.ZodType<AnswerOf[K]> };

export const ANSWER_SCHEMAS: Schemas = {
  continue: loopAnswer,
  retry: loopAnswer,
  'fix-review': loopAnswer,
  'spec-check': specAnswer,
  review: reviewAnswer,
  distill: lessonAnswer,
  plan: planAnswer,
};

/** The JSON Schema text given to `--json-schema` for a kind (draft-07, no `$schema` key). */
export function answerJsonSchema(kind: CallKind): string {
  const { $schema: _drop, ...schema } = z.toJSONSchema(ANSWER_SCHEMAS[kind], { target: 'draft-7' });
  return JSON.stringify(schema);
}

/** The validated answer, or `none` when it is missing or does not match the kind's schema. */
export function parseAnswer<K extends CallKind>(kind: K, value: unknown): AnswerOf[K] | 'none' {
  if (value === undefined || value === null) return 'none';
  const r = ANSWER_SCHEMAS[kind].safeParse(value);
  return r.success ? r.data : 'none';
}
