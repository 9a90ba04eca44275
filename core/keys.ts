/**
 * `chalk-harness/keys`: what a plugin declares its configuration keys with, light enough to
 * load before any kernel (`chalk config` and `chalk help` read the declarations without
 * importing a plugin): the key constructors, the shared value schemas, and the decider limit's
 * parser for a key that takes one.
 */
export * from './config/schemas.js';
export { parseLimit } from './protocol/entry.js';
