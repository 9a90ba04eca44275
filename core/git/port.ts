import type { HostGit } from '../ports/host-git.js';
import { importBundle } from './bundle-import.js';
import {
  changedPaths,
  commonDir,
  configGet,
  createBranch,
  createBundle,
  currentBranchName,
  fileAt,
  forEachRef,
  mergeBase,
  push,
  revParse,
  statusPorcelain,
} from './host-git.js';

/**
 * The HostGit port's implementation: core/git itself (hooks off on every call,
 * bundles checked before anything is fetched). The kernel binds it; tests that
 * run the loop in-process use it too, since git runs everywhere.
 */
export const hostGitPort: HostGit = {
  revParse,
  configGet,
  statusPorcelain,
  currentBranchName,
  commonDir,
  forEachRef,
  createBranch,
  push,
  mergeBase,
  changedPaths,
  fileAt,
  createBundle,
  importBundle,
};
