import { z } from 'zod';
import { DecisionFailure } from './failure.js';
import { type DecisionRequest, PROTOCOL_VERSION, type Question } from './questions.js';

/** The path every decider answers on. */
export const DECIDE_PATH = '/v1/systemone';

/**
 * The v1 wire body: `{protocol: 1, state, questions}`, questions in the order
 * asked. A server ignores fields it does not know, so nothing else is sent.
 */
export function encodeRequest(request: DecisionRequest): string {
  let body = encoded.get(request);
  if (body === undefined) {
    body = JSON.stringify({ protocol: PROTOCOL_VERSION, state: request.state, questions: request.questions });
    encoded.set(request, body);
  }
  return body;
}
/** A request is priced and sent as the same body, encoded once (requests are not changed after they are built). */
const encoded = new WeakMap<DecisionRequest, string>();

const probability = z.number().refine((p) => Number.isFinite(p) && p >= 0 && p <= 1, {
  error: (i) => `is a probability between 0 and 1, got ${String(i.input)}`,
});

// Unknown fields are ignored everywhere (zod's default object strips them).
const NoulAnswerWire = z.object({ type: z.literal('noul').optional(), noul: probability });
const ChoiceAnswerWire = z.object({
  type: z.literal('choice').optional(),
  choice: z.string(),
  confidence: probability,
  probabilities: z.record(z.string(), probability).optional(),
});
const ScoreAnswerWire = z.object({
  type: z.literal('score').optional(),
  score: z.number().refine(Number.isFinite, { error: 'is not a number' }),
  confidence: probability,
  probabilities: z.record(z.string(), probability).optional(),
});

const ResponseWire = z.object({
  protocol: z.number().optional(),
  model: z.string({ error: 'names no model' }),
  answers: z.custom<Record<string, unknown>>((v) => v !== null && typeof v === 'object' && !Array.isArray(v), {
    error: 'has no answers object',
  }),
  usage: z.object({ input_tokens: z.number().int().nonnegative().optional() }).loose().optional().catch(undefined),
});

export interface NoulAnswer {
  type: 'noul';
  /** P(the statement is true). */
  noul: number;
}
export interface ChoiceAnswer {
  type: 'choice';
  choice: string;
  confidence: number;
  probabilities?: Record<string, number>;
}
export interface ScoreAnswer {
  type: 'score';
  /** The expected level, from 0. */
  score: number;
  confidence: number;
  probabilities?: Record<string, number>;
}
export type Answer = NoulAnswer | ChoiceAnswer | ScoreAnswer;

/** A 200 read against the request it answers. */
export interface DecisionResponse {
  protocol: number;
  /** Which model answered (the server's word). */
  model: string;
  /** One answer per question answered, in the order asked; a key that is missing is unknown. */
  answers: Record<string, Answer>;
  /** `usage.input_tokens` when the server reports it. */
  inputTokens: number | null;
}

const invalid = (message: string) => new DecisionFailure('invalid', message);

function issue(error: z.ZodError): string {
  const i = error.issues[0];
  if (!i) return 'is not one';
  return i.path.length > 0 ? `${i.path.join('.')} ${i.message}` : i.message;
}

function readAnswer(id: string, question: Question, raw: unknown): Answer {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw invalid(`the answer to '${id}' is not an object`);
  }
  const said = (raw as { type?: unknown }).type;
  if (said !== undefined && said !== question.type) {
    throw invalid(`the answer to '${id}' is a ${String(said)}, but '${id}' was asked as a ${question.type}`);
  }
  const schema =
    question.type === 'noul' ? NoulAnswerWire : question.type === 'choice' ? ChoiceAnswerWire : ScoreAnswerWire;
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw invalid(`the answer to '${id}' is not one: ${issue(parsed.error)}`);
  const a = parsed.data;
  if (question.type === 'noul') return { type: 'noul', noul: (a as z.infer<typeof NoulAnswerWire>).noul };
  if (question.type === 'choice') {
    const c = a as z.infer<typeof ChoiceAnswerWire>;
    if (!Object.hasOwn(question.criteria, c.choice)) {
      throw invalid(`the answer to '${id}' picks '${c.choice}', not among the options asked`);
    }
    return {
      type: 'choice',
      choice: c.choice,
      confidence: c.confidence,
      ...(c.probabilities ? { probabilities: c.probabilities } : {}),
    };
  }
  const s = a as z.infer<typeof ScoreAnswerWire>;
  const top = question.criteria.length - 1;
  if (s.score < 0 || s.score > top) {
    throw invalid(`the answer to '${id}' scores ${s.score}, off the scale 0 to ${top}`);
  }
  return {
    type: 'score',
    score: s.score,
    confidence: s.confidence,
    ...(s.probabilities ? { probabilities: s.probabilities } : {}),
  };
}

/**
 * Reads a 200 body against its request. Lenient about extra fields, strict about
 * what it reads: a body that is not an answer is an `invalid` failure naming
 * what is wrong, and a protocol other than 1 is a `version` failure naming both.
 * Messages never quote the state. Answers to questions not asked are dropped.
 */
export function decodeResponse(body: string, request: DecisionRequest): DecisionResponse {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw invalid('the body is not JSON');
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) throw invalid('the body is not a JSON object');
  const protocol = (json as { protocol?: unknown }).protocol;
  if (protocol !== undefined && protocol !== PROTOCOL_VERSION) {
    throw new DecisionFailure(
      'version',
      `the decider speaks protocol ${JSON.stringify(protocol)}, Chalk speaks ${PROTOCOL_VERSION}`,
    );
  }
  const parsed = ResponseWire.safeParse(json);
  if (!parsed.success) throw invalid(`the body ${issue(parsed.error)}`);
  const answers: Record<string, Answer> = {};
  for (const [id, question] of Object.entries(request.questions)) {
    if (!Object.hasOwn(parsed.data.answers, id)) continue; // unknown
    const raw = parsed.data.answers[id];
    if (raw === null) continue;
    answers[id] = readAnswer(id, question, raw);
  }
  return {
    protocol: PROTOCOL_VERSION,
    model: parsed.data.model,
    answers,
    inputTokens: parsed.data.usage?.input_tokens ?? null,
  };
}
