/** Reading a spec: checkpoints, ticks, the title, and the spec-check stamp. */
export {
  type Checkpoint,
  checkpoints,
  newlyTicked,
  openCount,
  type SpecLine,
  specLines,
  specTitle,
  tickedCount,
  untickAll,
} from './checkpoints.js';
export { gitBlobHash } from './git-blob.js';
export { clearStamp, readStamp, STAMP_FILE, specStamp, stampMatches, writeStamp } from './stamp.js';
