/**
 * The token count Chalk prices a decision at, before the wire: an estimate of
 * one token per 4 bytes of UTF-8, rounded up. Decider tokenizers (Qwen-family
 * BPE for strands-decider) average 3.5 to 4.5 bytes per token on English and
 * code, so the estimate is within about 15% either way; the record keeps the
 * server's own `usage.input_tokens` when it sends one.
 */
export function estimateTokens(text: string): number {
  return Math.ceil(Buffer.byteLength(text, 'utf8') / 4);
}
