/** An amount of US dollars as a person reads it: `$1.50`; anything not finite is `$0.00`. */
export const usd = (v: number): string => `$${(Number.isFinite(v) ? v : 0).toFixed(2)}`;
