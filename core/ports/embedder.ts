/** Turns text into unit-length vectors for semantic lesson recall. */
export interface Embedder {
  readonly dimensions: number;
  /** `deadline`: absolute time (ms since the epoch) the answer must be complete by (a loop's budget). */
  embed(texts: string[], opts?: { signal?: AbortSignal; deadline?: number }): Promise<number[][]>;
}
