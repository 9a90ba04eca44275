/** Turns text into unit-length vectors for semantic lesson recall. */
export interface Embedder {
  readonly dimensions: number;
  embed(texts: string[], opts?: { signal?: AbortSignal }): Promise<number[][]>;
}
