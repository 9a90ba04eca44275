import type { HostGit } from '../ports/host-git.js';
import { importBundle } from './bundle-import.js';
import {
  changedPaths,
  commonDir,
  configGet,
  createBranch,
  createBundle,
  currentBranchName,
  deleteBranch,
  diffSummary,
  fileAt,
  forEachRef,
  isAncestor,
  mergeBase,
  push,
  recentCommits,
  refExists,
  remotesContaining,
  resolveCommit,
  revParse,
  statusPorcelain,
  switchNewBranch,
  worktreeAdd,
  worktreePrune,
  worktreeRemove,
} from './host-git.js';

/**
 * The HostGit port's implementation (what core/run, core/setup and core/store use): core/git itself (hooks off on every call,
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
  refExists,
  resolveCommit,
  deleteBranch,
  worktreeAdd,
  worktreeRemove,
  worktreePrune,
  recentCommits,
  diffSummary,
  switchNewBranch,
  isAncestor,
  remotesContaining,
};
