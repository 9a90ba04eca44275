import { describe, expect, it } from 'vitest';
import {
  autoCpus,
  runContainerOptions,
  SANDBOX_UID,
  sandboxUser,
} from '../../plugins/sandbox-docker/container-config.js';
import { rewriteLoopback, sandboxEnv } from '../../plugins/sandbox-docker/env.js';
import { containerName, labelFilter } from '../../plugins/sandbox-docker/names.js';

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

  it('gives the agent only the credentials that are set, and the container none, never a forge token', () => {
    const env = sandboxEnv(
      {
        ANTHROPIC_API_KEY: 'sk-1',
        CLAUDE_CODE_OAUTH_TOKEN: '',
        GH_TOKEN: 'gh',
        GITLAB_TOKEN: 'gl',
        PATH: '/usr/bin',
        HOME: '/root',
      },
      null,
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
      },
    );
    expect(env.container).toEqual(['HOME=/home/chalk', 'LANG_EXTRA=ok']);
    expect(env.agent).toEqual({ ANTHROPIC_API_KEY: 'sk-1' });
    expect(env.needsHostAlias).toBe(false);
  });

  it('maps a loopback gateway and telemetry endpoint to the host, with the signals chosen, for the agent only', () => {
    const host = {
      ANTHROPIC_AUTH_TOKEN: 't',
      ANTHROPIC_BASE_URL: 'http://localhost:4000',
      OTEL_EXPORTER_OTLP_HEADERS: 'a=b',
    };
    const telemetry = {
      endpoint: 'http://127.0.0.1:4317',
      protocol: 'grpc',
      signals: ['traces', 'logs'],
      headers: false,
    };
    const env = sandboxEnv(host, telemetry);
    expect(env.needsHostAlias).toBe(true);
    expect(env.container).toEqual(['HOME=/home/chalk']);
    expect(env.agent).toMatchObject({
      ANTHROPIC_BASE_URL: 'http://host.docker.internal:4000',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://host.docker.internal:4317',
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_METRICS_EXPORTER: 'none',
    });
    // The headers often carry a token: only when CHALK_OTEL_HEADERS says so.
    expect(env.agent.OTEL_EXPORTER_OTLP_HEADERS).toBeUndefined();
    expect(sandboxEnv(host, { ...telemetry, headers: true }).agent.OTEL_EXPORTER_OTLP_HEADERS).toBe('a=b');
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
        needsHostAlias: true,
        user: '1000:1000',
        tmpfsSize: '2g',
        limits: { memoryMb: 1024, cpus: 1.5, pids: 512 },
      },
    });
    expect(o.HostConfig?.CapDrop).toEqual(['ALL']);
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
    expect(o.HostConfig?.ExtraHosts).toEqual(['host.docker.internal:host-gateway']);
    expect(o.Labels).toEqual({
      'chalk.repo': 'my repo',
      'chalk.ticket': 'PROJ-7',
      'chalk.run': 'PROJ-7-1',
      'chalk.kind': 'run',
    });
    expect(o.User).toBe('1000:1000');
  });

  it('auto CPUs are half the engine, at least one', () => {
    expect([1, 2, 3, 8, 64].map(autoCpus)).toEqual([1, 1, 1, 4, 32]);
  });
});
