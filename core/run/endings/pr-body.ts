import { type BlockedHost, firstSentence } from '../../egress/report.js';
import type { LoopHooks, PrBodyContext } from '../../kernel/hooks.js';
import { specTitle } from '../../spec/checkpoints.js';
import { oneLine } from '../../text/model.js';
import { usd } from '../../text/money.js';

/**
 * The pull or merge request a finished ticket opens: its title is the spec's
 * first heading, and its body summarises the run. The body built here is
 * where the `prBody` hook's waterfall starts; plugins may rewrite it.
 *
 * What the model wrote (the review's summary) is inert text there: one line in a code span,
 * where no forge renders a mention, HTML, an image, a heading or a link. The hook's taps get
 * that body and the run's numbers, never the model's raw text.
 */
export interface PrBodyInput extends PrBodyContext {
  /** The final review's summary; null or '' when there was no review or it said nothing. */
  reviewSummary: string | null;
  /** Destinations the sandbox's egress proxy refused during the run, most refused first. */
  blocked?: readonly BlockedHost[];
  /** CHALK_BASELINE=known: the tests that failed on the base before this change (the rubric was judged against them). */
  baselineFailures?: readonly string[];
}

/** Refused destinations a request body lists; the rest are counted. */
const BLOCKED_LISTED = 20;

/** The body's section on what the sandbox was refused, each with the setting that would allow it. */
function blockedSection(blocked: PrBodyInput['blocked']): string[] {
  if (!blocked || blocked.length === 0) return [];
  const lines = blocked.slice(0, BLOCKED_LISTED).map((b) => {
    const allow = b.allowable
      ? `to allow: ${inlineCode(`CHALK_EGRESS_ALLOW=${b.target}`)}`
      : `never allowed: ${firstSentence(b.reason)}`;
    return `- ${inlineCode(b.target)}: refused ${b.count} time${b.count === 1 ? '' : 's'} (${b.phases.slice(0, 5).join(', ')}); ${allow}`;
  });
  const more = blocked.length - BLOCKED_LISTED;
  return [
    '### Network access the sandbox was refused',
    '',
    ...lines,
    ...(more > 0 ? [`- and ${more} more (see ${inlineCode('io/egress.jsonl')} of the run)`] : []),
    '',
  ];
}

/** How many of the base's failing tests the body names. */
export const BASELINE_SHOWN = 20;

/** The rubric's line: passed, or (CHALK_BASELINE=known) added no failing test to those that failed before. */
function rubricItem(command: string, before: readonly string[]): string {
  if (before.length === 0) return `Rubric: ${inlineCode(command)} passed in the sandbox`;
  const shown = before.slice(0, BASELINE_SHOWN).map(inlineCode).join(', ');
  const more = before.length > BASELINE_SHOWN ? ` and ${before.length - BASELINE_SHOWN} more` : '';
  return `Rubric: ${inlineCode(command)} adds no failing test in the sandbox. Failing before this change, on the base branch (CHALK_BASELINE=known): ${shown}${more}`;
}

/** Inline code that survives backticks in the text: the fence is longer than any run inside. */
export function inlineCode(text: string): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${text}${pad}${fence}`;
}

/** How much of the review's summary a request body carries. */
export const REVIEW_SUMMARY_MAX = 2000;

/** Model-written text as a request body shows it: one line in a code span (nothing in it renders). */
export const inertText = (text: string, max = REVIEW_SUMMARY_MAX): string => inlineCode(oneLine(text, max));

/** Money as a request body shows it. */
export const dollars = usd;

export function prBody(input: PrBodyInput): string {
  const items = [
    `Spec: ${inlineCode(input.specPath)}, all ${input.checkpoints} checkpoint${input.checkpoints === 1 ? '' : 's'} ticked`,
    `Agent loops: ${input.loops}`,
    `Agent cost: ${dollars(input.costUsd)}`,
    `Human interventions (office hours): ${input.humanInterventions}`,
    rubricItem(input.rubricCommand, input.baselineFailures ?? []),
  ];
  const review = input.reviewSummary ?? '';
  if (oneLine(review) !== '')
    items.push(`Review before submission, in the reviewing agent's words: ${inertText(review)}`);
  return [
    '## Chalk run summary',
    '',
    ...items.map((i) => `- ${i}`),
    '',
    ...blockedSection(input.blocked),
    'An agent wrote this change. Review the diff as carefully as you would any other.',
    '',
  ].join('\n');
}

/** The request's title: the spec's first `# ` heading, or the ticket key when there is none. */
export function requestTitle(spec: string, ticket: string): string {
  return specTitle(spec) || ticket;
}

/** The body after every `prBody` tap (a failing tap is skipped by the kernel). */
export function buildPrBody(hooks: Pick<LoopHooks, 'prBody'>, input: PrBodyInput): Promise<string> {
  // Everything but the model's words, which the body carries only inert.
  const { reviewSummary: _, ...context } = input;
  return hooks.prBody.promise(prBody(input), Object.freeze(context) satisfies PrBodyContext);
}
