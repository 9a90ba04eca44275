/**
 * `chalk-harness/host`: the host-side helpers a plugin that runs things on this machine
 * needs, each the one rule Chalk keeps for it: the state directory (and the decider's part
 * of it), locks and pid files, spawning a command, an npm prefix a plugin installs into,
 * host files written safely (never through a link), a repository file read safely, a
 * sandbox's bundle and saved state brought out checked, the toolchains a stack names, the
 * agent's credential names, the trust record shape plugins and dev containers share, and
 * the packaged `share/` directory.
 */
export { CREDENTIALS, GATEWAY_URL } from './agent/credentials.js';
export { type CappedLog, openCappedLog, writeBeside, writeHostFile, writeNewFile } from './fs/host-file.js';
export { readJsonRecord, writeJsonRecord } from './fs/json-record.js';
export { type RepoFileOptions, readRepoFile } from './fs/repo-file.js';
export { keepOutBundle } from './fs/sandbox-bundle.js';
export { openStateFile, readState, stateOutcome, writeState } from './fs/sandbox-state.js';
export {
  addTrust,
  readTrustRecord,
  removeTrust,
  type TrustEntry,
  type TrustRecordUse,
  type TrustState,
  trustState,
} from './kernel/plugin-trust.js';
export { deciderStateDir, stateDir } from './layout.js';
export { PACKAGE_ROOT, SHARE_DIR } from './paths.js';
export { exitBarrier, holdExit } from './process/exit-barrier.js';
export { KeptOutput } from './process/kept-output.js';
export { acquireLock, LockTimeout, type TurnOptions, tryLock, waitForTurn } from './process/lock.js';
export { ensureNpmPrefix, installedVersion, type NpmPackage } from './process/npm-prefix.js';
export { alive, livePid, readPid } from './process/pid.js';
export { type RunOptions, type RunResult, run, runOk } from './process/run.js';
export { mainRoot } from './repo/git.js';
export {
  isToolchain,
  programsOf,
  TOOLCHAIN_NAMES,
  TOOLCHAINS,
  type ToolchainName,
  toolchainList,
  toolchainProviding,
} from './stack/toolchains.js';
