/**
 * The decider: a small, fast model answering bounded, typed questions over
 * one HTTP protocol. The decision issue (core/decision) refines this interface.
 */
export interface Decider {
  readonly name: string;
}
