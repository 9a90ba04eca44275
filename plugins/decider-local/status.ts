import { isLocalUrl } from '../../core/decider.js';
import { alive, readPid } from '../../core/host.js';
import type { CheckResult, Config, DeciderStatusPart } from '../../core/plugin.js';
import { SLOW_MEDIAN_MS } from './client.js';
import { type Installed, modelRevision, readInstalled } from './installed.js';
import { type LocalDeciderPaths, localDeciderPaths } from './paths.js';
import { describeInstalled } from './up.js';

/** Which of the installation's processes run now. */
export interface Running {
  decider: boolean;
  embed: boolean;
  watcher: boolean;
}

/** What `chalk decider status --json` says about the local installation (its `parts.local`). */
export interface LocalInstallStatus {
  installedAt: string;
  package: string;
  packageVersion: string | null;
  device: string | null;
  decider: { model: string; revision: string };
  base: { model: string; revision: string } | null;
  embed: { model: string; revision: string };
  /** The median of 5 warm questions `chalk decider up` measured, ms; null when not measured. */
  medianMs: number | null;
  measuredAt: string | null;
  /** At or over 1 s (or never measured): CHALK_DECIDER=on records as shadow here. */
  slow: boolean;
  running: Running;
  /** Whether this repository's CHALK_DECIDER_URL is the local service (else it is installed but not asked). */
  used: boolean;
}

/** The status of an installation (pure: the record, what runs, whether the URL is on this machine). */
export function localInstallStatus(i: Installed, running: Running, used: boolean): LocalInstallStatus {
  return {
    installedAt: i.installedAt,
    package: i.package,
    packageVersion: i.packageVersion,
    device: i.device,
    decider: { model: i.decider.model, revision: i.decider.revision },
    base: i.base,
    embed: { model: i.embed.model, revision: i.embed.revision },
    medianMs: i.benchMs,
    measuredAt: i.benchedAt,
    slow: i.benchMs === null || i.benchMs >= SLOW_MEDIAN_MS,
    running,
    used,
  };
}

/** `running`, or what is not. */
export function describeRunning(r: Running): string {
  if (r.decider && r.embed) return `running${r.watcher ? '' : ' (no idle watcher)'}`;
  if (!r.decider && !r.embed) return 'stopped (a run starts it)';
  return `${r.decider ? 'embedding service' : 'decider'} stopped (chalk decider up starts it again)`;
}

/** The text form: the lines `chalk decider up` prints about the install, then whether it runs and is used. */
export function installStatusLines(i: Installed, s: LocalInstallStatus): string[] {
  return [
    'local install (chalk decider up):',
    ...describeInstalled(i).map((l) => `  ${l}`),
    `  services   ${describeRunning(s.running)}`,
    ...(s.used ? [] : ['  used       no: CHALK_DECIDER_URL is on another machine']),
  ];
}

/** `chalk doctor`'s one line about the same installation. */
export function installCheckResult(s: LocalInstallStatus): CheckResult {
  const median = s.medianMs === null ? 'not measured' : `median ${s.medianMs} ms`;
  const heldBySpeed = s.medianMs !== null && s.slow;
  return {
    status: heldBySpeed ? '--' : 'ok',
    label: 'local decider',
    detail: [
      modelRevision(s.decider),
      modelRevision(s.embed),
      ...(s.device ? [`--device ${s.device}`] : []),
      `${median}${heldBySpeed ? ' (over 1 s: CHALK_DECIDER=on records as shadow)' : ''}`,
      describeRunning(s.running),
    ].join(', '),
  };
}

function runningNow(paths: LocalDeciderPaths): Running {
  const up = (f: string) => {
    const pid = readPid(f);
    return pid !== null && alive(pid);
  };
  return { decider: up(paths.deciderPid), embed: up(paths.embedPid), watcher: up(paths.watchPid) };
}

/** Reads the installation and what runs, or null when nothing is installed. */
export function readInstallStatus(
  config: Config,
  env: NodeJS.ProcessEnv = process.env,
): { installed: Installed; status: LocalInstallStatus } | null {
  const paths = localDeciderPaths(env);
  const installed = readInstalled(paths.installed);
  if (!installed) return null;
  const used = isLocalUrl(config.str('CHALK_DECIDER_URL'));
  return { installed, status: localInstallStatus(installed, runningNow(paths), used) };
}

/** decider-local's part of `chalk decider status`: the installation, when there is one. */
export function localStatusPart(config: Config, env: NodeJS.ProcessEnv = process.env): DeciderStatusPart {
  return {
    id: 'local',
    async read() {
      const r = readInstallStatus(config, env);
      if (!r) return null;
      return { json: { ...r.status }, lines: installStatusLines(r.installed, r.status) };
    },
  };
}
