/**
 * What a model call costs, from the tokens the model's own responses report: the list prices
 * per million tokens, by model family. A cache write costs 1.25 times the input price (five
 * minutes) or twice it (one hour), a cache read a tenth. A model the table does not know is
 * priced as the dearest one, so a budget never holds less than it should; the call says so.
 */

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  /** Cache writes, five-minute and one-hour together. */
  cacheCreationTokens: number;
  /** Of the cache writes, those kept one hour (priced higher). */
  cacheCreation1hTokens: number;
}

interface Price {
  input: number;
  output: number;
}

/** Longest prefix first: `claude-opus-4-5` before `claude-opus-4`. */
const PRICES: readonly [RegExp, Price][] = [
  [/^claude-opus-4-[5-9]/, { input: 5, output: 25 }],
  [/^claude-opus-4/, { input: 15, output: 75 }],
  [/^claude-3-opus/, { input: 15, output: 75 }],
  [/^claude-sonnet-4/, { input: 3, output: 15 }],
  [/^claude-3-[57]-sonnet/, { input: 3, output: 15 }],
  [/^claude-haiku-4/, { input: 1, output: 5 }],
  [/^claude-3-5-haiku/, { input: 0.8, output: 4 }],
  [/^claude-3-haiku/, { input: 0.25, output: 1.25 }],
];

/** The dearest price in the table: what an unknown model costs. */
const DEAREST: Price = { input: 15, output: 75 };

export function priceOf(model: string): { price: Price; known: boolean } {
  const m = model.toLowerCase().replace(/^(?:anthropic\.|us\.anthropic\.|eu\.anthropic\.)/, '');
  for (const [re, price] of PRICES) if (re.test(m)) return { price, known: true };
  return { price: DEAREST, known: false };
}

export function costUsd(model: string, u: TokenUsage): { usd: number; known: boolean } {
  const { price, known } = priceOf(model);
  const fiveMinute = Math.max(0, u.cacheCreationTokens - u.cacheCreation1hTokens);
  const perInput = u.inputTokens + fiveMinute * 1.25 + u.cacheCreation1hTokens * 2 + u.cacheReadTokens * 0.1;
  return { usd: (perInput * price.input + u.outputTokens * price.output) / 1_000_000, known };
}
