/** Reading a spec: checkpoints, ticks, the title, and the spec-check stamp. */
export {
  type Checkpoint,
  checkpoints,
  newlyTicked,
  OPEN_LINE,
  openCount,
  specTitle,
  TICKED_LINE,
  tickedCount,
} from './checkpoints.js';
export { gitBlobHash } from './git-blob.js';
export { clearStamp, readStamp, STAMP_FILE, specStamp, stampMatches, untickAll, writeStamp } from './stamp.js';
