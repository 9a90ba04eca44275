import { describe, expect, it } from 'vitest';
import {
  autoCpus,
  runContainerOptions,
  SANDBOX_UID,
  sandboxUser,
} from '../../plugins/sandbox-docker/container-config.js';
import { rewriteLoopback, sandboxEnv } from '../../plugins/sandbox-docker/env.js';
import { containerName, labelFilter } from '../../plugins/sandbox-docker/names.js';
import { missingRuntime } from '../../plugins/sandbox-docker/sandbox.js';

describe('sandbox container environment', () => {
  it('rewrites loopback URLs to host.docker.internal and leaves others alone', () => {
    expect(rewriteLoopback('http://localhost:8080')).toEqual({
      url: 'http://host.docker.internal:8080',
      rewritten: true,
    });
    expect(rewriteLoopback('http://127.0.0.1:4317/')).toEqual({
      url: 'http://host.docker.internal:4317/',
      rewritten: true,
    });
    expect(rewriteLoopback('http://[::1]:9/v1')).toEqual({ url: 'http://host.docker.internal:9/v1', rewritten: true });
    expect(rewriteLoopback('https://gateway.example.com/x')).toEqual({
      url: 'https://gateway.example.com/x',
      rewritten: false,
    });
    expect(rewriteLoopback('not a url').rewritten).toBe(false);
  });

  const net = {
    containerEnv: ['HTTPS_PROXY=http://10.9.0.2:3128', 'NO_PROXY=10.9.0.2,localhost'],
    agentEnv: { ANTHROPIC_BASE_URL: 'http://10.9.0.2:8080', ANTHROPIC_API_KEY: 'chalk-run-token' },
  };

  it('gives the agent the gateway and the run token, never a credential of the host, and the container its proxy', () => {
    const env = sandboxEnv(
      {
        ANTHROPIC_API_KEY: 'sk-1',
        ANTHROPIC_AUTH_TOKEN: 'gw',
        CLAUDE_CODE_OAUTH_TOKEN: 'oauth',
        ANTHROPIC_BASE_URL: 'https://gateway.example.com',
        GH_TOKEN: 'gh',
        GITLAB_TOKEN: 'gl',
        PATH: '/usr/bin',
        HOME: '/root',
      },
      null,
      net,
      {
        GITHUB_TOKEN: 'x',
        GLAB_TOKEN: 'y',
        MY_SECRET: 'z',
        DOCKER_HOST: 'tcp://x',
        LANG_EXTRA: 'ok',
        HOME: '/evil',
        ANTHROPIC_API_KEY: 'from-a-tap',
        OTEL_EXPORTER_OTLP_HEADERS: 'a=b',
        STRIPE_KEY: 'k',
        HTTPS_PROXY: 'http://evil.example.com:3128',
      },
    );
    expect(env.container).toEqual([
      'HOME=/home/chalk',
      'HTTPS_PROXY=http://10.9.0.2:3128',
      'NO_PROXY=10.9.0.2,localhost',
      'LANG_EXTRA=ok',
    ]);
    expect(env.agent).toEqual(net.agentEnv);
    for (const secret of ['sk-1', 'gw', 'oauth', 'gh', 'gl']) expect(JSON.stringify(env)).not.toContain(secret);
  });

  it('gives the agent the telemetry endpoint as written, with the signals chosen, and the headers only when told', () => {
    const host = { OTEL_EXPORTER_OTLP_HEADERS: 'a=b' };
    const telemetry = {
      endpoint: 'https://otel.example.com:4318',
      protocol: 'http/protobuf',
      signals: ['traces', 'logs'],
      headers: false,
    };
    const env = sandboxEnv(host, telemetry, net);
    expect(env.agent).toMatchObject({
      ...net.agentEnv,
      OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example.com:4318',
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_METRICS_EXPORTER: 'none',
    });
    // The headers often carry a token: only when CHALK_OTEL_HEADERS says so.
    expect(env.agent.OTEL_EXPORTER_OTLP_HEADERS).toBeUndefined();
    expect(sandboxEnv(host, { ...telemetry, headers: true }, net).agent.OTEL_EXPORTER_OTLP_HEADERS).toBe('a=b');
  });
});

describe('sandbox container shape', () => {
  const spec = {
    repo: 'my repo',
    source: '/s/in.bundle',
    ticket: 'PROJ-7',
    runId: 'PROJ-7-1',
    branch: 'chalk/PROJ-7',
    author: { name: 'A', email: 'a@example.com' },
  };

  it('is named after repo and ticket with unsafe characters replaced, and labelled', () => {
    expect(containerName(spec)).toBe('chalk-sandbox-my-repo-PROJ-7');
    expect(containerName({ ...spec, suffix: 'distill' })).toBe('chalk-sandbox-my-repo-PROJ-7-distill');
    expect(labelFilter({ repo: 'r', ticket: 'T-1' })).toEqual(['chalk.repo=r', 'chalk.ticket=T-1']);
  });

  it('runs as the invoking user, or the image user instead of root', () => {
    expect(sandboxUser(0, 0)).toBe(`${SANDBOX_UID}:${SANDBOX_UID}`);
    expect(sandboxUser(1000, 1001)).toBe('1000:1001');
  });

  it('drops every capability, forbids privilege gain, mounts nothing of the host, limits and a read-only root', () => {
    const o = runContainerOptions({
      name: 'n',
      image: 'img',
      spec,
      shape: {
        env: ['HOME=/home/chalk'],
        network: { name: 'chalk-net-x', dns: '10.9.0.2' },
        user: '1000:1000',
        tmpfsSize: '2g',
        limits: { memoryMb: 1024, cpus: 1.5, pids: 512 },
      },
    });
    // Only the init and the keeper run as root, with these three; every command runs as `user` (exec.ts).
    expect(o.HostConfig?.CapDrop).toEqual(['ALL']);
    expect(o.HostConfig?.CapAdd).toEqual(['KILL', 'SETUID', 'SETGID']);
    expect(o.HostConfig?.LogConfig).toEqual({ Type: 'none', Config: {} });
    expect(o.HostConfig?.SecurityOpt).toEqual(['no-new-privileges']);
    expect(o.HostConfig?.Binds).toEqual([]);
    expect(o.HostConfig?.Mounts).toEqual([]);
    expect(o.HostConfig?.ReadonlyRootfs).toBe(true);
    expect(o.HostConfig?.Memory).toBe(1024 * 1024 * 1024);
    expect(o.HostConfig?.MemorySwap).toBe(1024 * 1024 * 1024);
    expect(o.HostConfig?.NanoCpus).toBe(1.5e9);
    expect(o.HostConfig?.PidsLimit).toBe(512);
    expect(JSON.stringify(o)).not.toContain('docker.sock');
    expect(JSON.stringify(o)).not.toContain('/s/in.bundle');
    expect(o.HostConfig?.Tmpfs?.['/work']).toBe('rw,exec,nosuid,nodev,mode=1777,size=2g');
    expect(o.HostConfig?.Tmpfs?.['/chalk']).toMatch(/mode=0755/);
    expect(o.HostConfig?.NetworkMode).toBe('chalk-net-x');
    expect(o.HostConfig?.Dns).toEqual(['10.9.0.2']);
    expect(o.HostConfig?.Sysctls).toEqual({ 'net.ipv6.conf.all.disable_ipv6': '1' });
    expect(o.HostConfig?.ExtraHosts).toBeUndefined();
    expect(o.HostConfig?.Runtime).toBeUndefined();
    expect(o.Labels).toEqual({
      'chalk.repo': 'my repo',
      'chalk.ticket': 'PROJ-7',
      'chalk.run': 'PROJ-7-1',
      'chalk.kind': 'run',
    });
    expect(o.User).toBe('0:0');
    expect(o.Cmd?.slice(0, 2)).toEqual(['sh', '-c']);
    expect(o.Cmd?.at(-1)).toContain('kill -KILL -1');
  });

  it('auto CPUs are half the engine, at least one', () => {
    expect([1, 2, 3, 8, 64].map(autoCpus)).toEqual([1, 1, 1, 4, 32]);
  });
});

describe('sandbox runtime', () => {
  it('is used when the engine has it, and refused in one line naming the setting when it does not', () => {
    expect(missingRuntime('runsc', ['runc', 'runsc'])).toBeNull();
    expect(missingRuntime('runsc', ['runc', 'io.containerd.runc.v2'])).toBe(
      'CHALK_SANDBOX_RUNTIME=runsc, but the Docker engine has no runsc runtime registered (it has runc, io.containerd.runc.v2); register it in /etc/docker/daemon.json ("runtimes") and reload the engine, or set CHALK_SANDBOX_RUNTIME=runc',
    );
  });

  it('is asked of the engine for the container, and only when set', () => {
    const o = runContainerOptions({
      name: 'n',
      image: 'img',
      spec: {
        repo: 'r',
        source: '/s',
        ticket: 'T-1',
        runId: 'T-1-1',
        branch: 'chalk/T-1',
        author: { name: 'A', email: 'a@example.com' },
      },
      shape: {
        env: [],
        network: { name: 'chalk-net-x', dns: '10.9.0.2' },
        runtime: 'runsc',
        user: '1000:1000',
        tmpfsSize: '1g',
        limits: { memoryMb: 512, cpus: 1, pids: 64 },
      },
    });
    expect(o.HostConfig?.Runtime).toBe('runsc');
  });
});
