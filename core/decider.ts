/**
 * `chalk-harness/decider`: what a decider plugin speaks, beside the Decider port in
 * `chalk-harness/plugin`. Decider protocol v1 (its questions, the codec, the answers), a
 * decider entry and its admission limit, the failures a client returns (`DecisionFailure`,
 * classified by `FailureKind`), the trust rule for a decider's address, and the shared HTTP
 * client (`HttpDecider`) every provider reached over HTTP builds on.
 */
export {
  classifyTransportError,
  getHealth,
  HttpDecider,
  type HttpDeciderOptions,
} from './decider-client/client.js';
export { CallDeadline } from './decider-client/deadline.js';
export { entryFromConfig } from './decider-client/entry-config.js';
export { displayUrl, isLocalUrl, isTrusted, trustKey, untrustedReason } from './decision/trust.js';
export {
  type Answer,
  type ChoiceAnswer,
  DECIDE_PATH,
  type DecisionResponse,
  decodeResponse,
  encodeRequest,
  type NoulAnswer,
  type ScoreAnswer,
} from './protocol/codec.js';
export {
  type AdmissionLimit,
  DEFAULT_CONTEXT_TOKENS,
  DEFAULT_LIMIT,
  type DeciderEntry,
  describeLimit,
  parseLimit,
} from './protocol/entry.js';
export {
  DecisionFailure,
  FAILURE_KINDS,
  type FailureDetail,
  type FailureKind,
  failureForStatus,
} from './protocol/failure.js';
export * from './protocol/questions.js';
