import type Dockerode from 'dockerode';
import { BUNDLE_MAX_BYTES, type SandboxSpec } from '../../core/plugin.js';
import { labelsFor } from './names.js';
import { script } from './scripts.js';

/** The size of /chalk (the system prompt, the keeper's answers): a bundle's cap and room beside it. */
const CHALK_TMPFS_MB = BUNDLE_MAX_BYTES / (1024 * 1024) + 64;

/** The image's non-root user; used when Chalk itself runs as root. */
export const SANDBOX_UID = 10001;

/** Who the container runs as: the invoking user, or the image's `chalk` user when that is root. */
export function sandboxUser(uid = process.getuid?.() ?? SANDBOX_UID, gid = process.getgid?.() ?? SANDBOX_UID): string {
  return uid === 0 ? `${SANDBOX_UID}:${SANDBOX_UID}` : `${uid}:${gid}`;
}

/** What one sandbox may use of the engine. */
export interface SandboxLimits {
  memoryMb: number;
  /** CPUs, fractional allowed. */
  cpus: number;
  pids: number;
}

/** Processes one sandbox may have at once (a fork bomb stops there). */
export const PIDS_LIMIT = 1024;

/** `CHALK_SANDBOX_CPUS=auto`: half the engine's CPUs, at least one (two sandboxes then fill the machine). */
export function autoCpus(engineCpus: number): number {
  return Math.max(1, Math.floor(engineCpus / 2));
}

export interface ContainerShape {
  /** The container's own environment (never a credential: the gateway holds those). */
  env: string[];
  /** The run's own network (egress/run-net.ts) and its only DNS server, the egress container. */
  network: { name: string; dns: string };
  /** The engine's runtime for the container (`runsc`: gVisor); absent: the engine's default. */
  runtime?: string;
  /** Who every command runs as (`uid:gid`, never root); the init and the keeper alone are root's. */
  user: string;
  tmpfsSize: string;
  limits: SandboxLimits;
}

/**
 * The capabilities the container's root processes keep, and nothing else has:
 * KILL for the keeper, which ends every other process on the host's signal;
 * SETUID and SETGID for the agent's exec, which starts the CLI as the sandbox
 * user from a root parent (so its output pipes are root's, not the agent's).
 * Every command runs as the sandbox user with none of them.
 */
export const ROOT_CAPS = ['KILL', 'SETUID', 'SETGID'] as const;

/**
 * The container's main process: the keeper (share/sandbox/scripts/keeper.sh)
 * as root, or `sleep infinity` in an image without bash (whose clone then
 * fails with a line saying so).
 */
const keeperCmd = () => [
  'sh',
  '-c',
  'if command -v bash >/dev/null 2>&1; then exec bash -c "$1" chalk-keeper; fi; exec sleep infinity',
  'chalk-keeper',
  script('keeper'),
];

/**
 * Every container gets these: every command as a non-root user without
 * capabilities, no privilege gain, no Docker socket, no host path mounted, no
 * log on the engine's disk, a read-only root file system with RAM disks only
 * where the sandbox must write, memory, CPU and pids limits, and a network of
 * its own whose only way out is the egress container. The init and the keeper
 * are root's (ROOT_CAPS only), out of the agent's reach: it cannot signal,
 * trace or rewrite them. `/chalk` is root's (mode 0755): the host puts
 * the system prompt there and the agent cannot change it.
 */
function hardened(shape: ContainerShape) {
  const memory = shape.limits.memoryMb * 1024 * 1024;
  return {
    User: '0:0',
    Env: shape.env,
    // No WorkingDir: Docker would create /work before the RAM disk and the disk would lose its mode.
    Cmd: keeperCmd(),
    // The keeper's channel: the host alone attaches to the container's stdin (keeper-channel.ts).
    OpenStdin: true,
    StdinOnce: false,
    HostConfig: {
      CapDrop: ['ALL'],
      CapAdd: [...ROOT_CAPS],
      SecurityOpt: ['no-new-privileges'],
      // Nothing the container prints is kept on the engine's disk.
      LogConfig: { Type: 'none', Config: {} },
      Privileged: false,
      // An init as PID 1 reaps what a killed command leaves behind.
      Init: true,
      ReadonlyRootfs: true,
      Binds: [],
      Mounts: [],
      Tmpfs: {
        '/work': `rw,exec,nosuid,nodev,mode=1777,size=${shape.tmpfsSize}`,
        '/home/chalk': 'rw,exec,nosuid,nodev,mode=1777,size=1g',
        '/tmp': 'rw,exec,nosuid,nodev,mode=1777,size=1g',
        '/var/tmp': 'rw,nosuid,nodev,mode=1777,size=256m',
        // The keeper's answers are kept here too, a bundle's at most BUNDLE_MAX_BYTES (a limit, not a reservation).
        '/chalk': `rw,noexec,nosuid,nodev,mode=0755,size=${CHALK_TMPFS_MB}m`,
      },
      NetworkMode: shape.network.name,
      Dns: [shape.network.dns],
      DnsSearch: [],
      // No IPv6 at all: the run's network has none, and no link-local address reaches the host.
      Sysctls: { 'net.ipv6.conf.all.disable_ipv6': '1' },
      ...(shape.runtime ? { Runtime: shape.runtime } : {}),
      Memory: memory,
      // Memory plus swap equal to memory: no swap.
      MemorySwap: memory,
      NanoCpus: Math.round(shape.limits.cpus * 1e9),
      PidsLimit: shape.limits.pids,
    } as Dockerode.HostConfig,
  };
}

/** A run's container: nothing of the host in it; the repository comes in as a bundle, through the API. */
export function runContainerOptions(args: {
  name: string;
  image: string;
  spec: SandboxSpec;
  shape: ContainerShape;
}): Dockerode.ContainerCreateOptions {
  return { ...hardened(args.shape), name: args.name, Image: args.image, Labels: labelsFor(args.spec) };
}

/** A throwaway container of the image (doctor probes). */
export function oneShotContainerOptions(args: {
  image: string;
  shape: ContainerShape;
}): Dockerode.ContainerCreateOptions {
  return { ...hardened(args.shape), Image: args.image, Labels: { 'chalk.oneshot': '1' } };
}
