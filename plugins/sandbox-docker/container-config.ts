import type Dockerode from 'dockerode';
import type { SandboxSpec } from '../../core/ports/sandbox.js';
import { HOST_ALIAS } from './env.js';
import { labelsFor } from './names.js';

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
  /** The container's own environment (never a credential: those go to the agent's exec only). */
  env: string[];
  needsHostAlias: boolean;
  user: string;
  tmpfsSize: string;
  limits: SandboxLimits;
}

/**
 * Every container gets these: non-root, no capabilities, no privilege gain, no
 * Docker socket, no host path mounted, a read-only root file system with RAM
 * disks only where the sandbox must write, and memory, CPU and pids limits.
 * `/chalk` is root's (mode 0755): the host puts the system prompt there and the
 * agent cannot change it.
 */
function hardened(shape: ContainerShape) {
  const memory = shape.limits.memoryMb * 1024 * 1024;
  return {
    User: shape.user,
    Env: shape.env,
    // No WorkingDir: Docker would create /work before the RAM disk and the disk would lose its mode.
    Cmd: ['sleep', 'infinity'],
    HostConfig: {
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
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
        '/chalk': 'rw,noexec,nosuid,nodev,mode=0755,size=16m',
      },
      ExtraHosts: shape.needsHostAlias ? [`${HOST_ALIAS}:host-gateway`] : [],
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
