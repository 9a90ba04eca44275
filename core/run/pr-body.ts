import type { LoopHooks, PrBodyContext } from '../kernel/hooks.js';
import { specTitle } from '../spec/checkpoints.js';

/**
 * The pull or merge request a finished ticket opens: its title is the spec's
 * first heading, and its body summarises the run. The body built here is
 * where the `prBody` hook's waterfall starts; plugins may rewrite it.
 */
export interface PrBodyInput extends PrBodyContext {
  /** The spec's path in the repository, `specs/T.md`. */
  specPath: string;
  /** Checkpoints in the spec (all ticked by now). */
  checkpoints: number;
  /** Office-hours fixes a person made on this ticket. */
  humanInterventions: number;
  /** `CHALK_TEST_CMD`. */
  rubricCommand: string;
  /** The final review's summary; null or '' when there was no review or it said nothing. */
  reviewSummary: string | null;
}

/** Inline code that survives backticks in the text: the fence is longer than any run inside. */
export function inlineCode(text: string): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${text}${pad}${fence}`;
}

/** Text that continues a list item: every further line indented under the item. */
const listText = (text: string) =>
  text
    .trim()
    .split(/\r?\n/)
    .map((l, i) => (i === 0 || l.trim() === '' ? l.trimEnd() : `  ${l.trimEnd()}`))
    .join('\n');

export const dollars = (usd: number) => `$${(Number.isFinite(usd) ? usd : 0).toFixed(2)}`;

export function prBody(input: PrBodyInput): string {
  const items = [
    `Spec: ${inlineCode(input.specPath)}, all ${input.checkpoints} checkpoint${input.checkpoints === 1 ? '' : 's'} ticked`,
    `Agent loops: ${input.loops}`,
    `Agent cost: ${dollars(input.costUsd)}`,
    `Human interventions (office hours): ${input.humanInterventions}`,
    `Rubric: ${inlineCode(input.rubricCommand)} passed in the sandbox`,
  ];
  const review = input.reviewSummary?.trim() ?? '';
  if (review !== '') items.push(`Review before submission: ${listText(review)}`);
  return [
    '## Chalk run summary',
    '',
    ...items.map((i) => `- ${i}`),
    '',
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
  return hooks.prBody.promise(prBody(input), input);
}
