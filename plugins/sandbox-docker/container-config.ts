import type Dockerode from 'dockerode';
import { SANDBOX_PATHS, type SandboxSpec } from '../../core/ports/sandbox.js';
import { type ContainerEnv, HOST_ALIAS } from './env.js';
import { labelsFor } from './names.js';

/** The image's non-root user; used when Chalk itself runs as root. */
export const SANDBOX_UID = 10001;

/** Who the container runs as: the invoking user, or the image's `chalk` user when that is root. */
export function sandboxUser(uid = process.getuid?.() ?? SANDBOX_UID, gid = process.getgid?.() ?? SANDBOX_UID): string {
  return uid === 0 ? `${SANDBOX_UID}:${SANDBOX_UID}` : `${uid}:${gid}`;
}

/** Every container gets these: non-root, no capabilities, no privilege gain, no Docker socket. */
function hardened(env: ContainerEnv, user: string, tmpfsSize: string) {
  return {
    User: user,
    Env: env.env,
    // No WorkingDir: Docker would create /work before the RAM disk and the disk would lose its mode.
    Cmd: ['sleep', 'infinity'],
    HostConfig: {
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      Privileged: false,
      // An init as PID 1 reaps what a killed command leaves behind.
      Init: true,
      Tmpfs: {
        '/work': `rw,exec,mode=1777,size=${tmpfsSize}`,
        '/home/chalk': 'rw,exec,mode=1777,size=1g',
      },
      ExtraHosts: env.needsHostAlias ? [`${HOST_ALIAS}:host-gateway`] : [],
      PidsLimit: 4096,
    } as Dockerode.HostConfig,
  };
}

/** A run's container: the git store read-only at /src.git, the io directory at /chalk. */
export function runContainerOptions(args: {
  name: string;
  image: string;
  spec: SandboxSpec;
  env: ContainerEnv;
  user: string;
  tmpfsSize: string;
}): Dockerode.ContainerCreateOptions {
  const base = hardened(args.env, args.user, args.tmpfsSize);
  return {
    ...base,
    name: args.name,
    Image: args.image,
    Labels: labelsFor(args.spec),
    HostConfig: {
      ...base.HostConfig,
      Binds: [`${args.spec.gitDir}:${SANDBOX_PATHS.gitStore}:ro`, `${args.spec.ioDir}:${SANDBOX_PATHS.io}:rw`],
    },
  };
}

/** A throwaway container of the image with no mounts (doctor probes). */
export function oneShotContainerOptions(args: {
  image: string;
  env: ContainerEnv;
  user: string;
}): Dockerode.ContainerCreateOptions {
  const base = hardened(args.env, args.user, '64m');
  return { ...base, Image: args.image, Labels: { 'chalk.oneshot': '1' } };
}
