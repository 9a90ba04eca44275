/**
 * What a decision thinker works on: artifacts, each of a named type (its alias,
 * e.g. `run`, `statement`). A tool takes an artifact of one type and produces
 * one artifact; no tool calls a model.
 */
export interface Artifact {
  /** The artifact's type alias, e.g. `statement`. Lists are `list`. */
  readonly type: string;
  /** A link's title, read as the artifact's words when no formatter is registered. */
  readonly title?: string;
}

/** A list of artifacts of one type. Its items join the world, each counting by its own type. */
export class ListArtifact<T extends Artifact = Artifact> implements Artifact {
  readonly type = 'list';
  constructor(
    readonly itemType: string,
    readonly items: readonly T[],
    /** What the list answers, when it is a thinker's answer. */
    readonly instruction?: string,
  ) {}
}

export const isList = (a: Artifact): a is ListArtifact => a instanceof ListArtifact;

export const isArtifact = (v: unknown): v is Artifact =>
  v !== null && typeof v === 'object' && typeof (v as { type?: unknown }).type === 'string';

/**
 * A tool's failure the model can read: a fact of the run, fed into the next
 * state. Anything else a tool throws is a bug and fails the run.
 */
export class ReadableToolError extends Error {
  override name = 'ReadableToolError';
  constructor(
    message: string,
    /** A correctable failure (a wrong input) is logged as the tool's verdict; an uncorrectable one with its stack. */
    readonly correctable = true,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The first ReadableToolError in an error's cause chain. */
export function readableIn(err: unknown): ReadableToolError | null {
  let e: unknown = err;
  for (let i = 0; e && i < 10; i++) {
    if (e instanceof ReadableToolError) return e;
    e = (e as { cause?: unknown }).cause;
  }
  return null;
}

/** One tool of a thinker's palette: an artifact of type `takes` in, one artifact out. */
export interface DecisionTool<I extends Artifact = Artifact, O extends Artifact = Artifact> {
  /** Names the tool in questions and the record; also keys the `<name>_input` question. */
  readonly name: string;
  /** One line the model reads when choosing the next tool. */
  readonly description: string;
  /** The artifact type it takes (`list` for a tool that takes lists). */
  readonly takes: string;
  run(input: I, ctx: { signal?: AbortSignal }): O | Promise<O>;
}
