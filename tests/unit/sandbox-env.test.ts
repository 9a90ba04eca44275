import { describe, expect, it } from 'vitest';
import { runContainerOptions, SANDBOX_UID, sandboxUser } from '../../plugins/sandbox-docker/container-config.js';
import { containerEnv, rewriteLoopback } from '../../plugins/sandbox-docker/env.js';
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

  it('passes only agent credentials that are set, never a forge token, even when a tap asks', () => {
    const env = containerEnv(
      {
        ANTHROPIC_API_KEY: 'sk-1',
        CLAUDE_CODE_OAUTH_TOKEN: '',
        GH_TOKEN: 'gh',
        GITLAB_TOKEN: 'gl',
        PATH: '/usr/bin',
        HOME: '/root',
      },
      null,
      { GITHUB_TOKEN: 'x', GLAB_TOKEN: 'y', MY_SECRET: 'z', DOCKER_HOST: 'tcp://x', LANG_EXTRA: 'ok', HOME: '/evil' },
    );
    expect(env.env).toEqual(['HOME=/home/chalk', 'ANTHROPIC_API_KEY=sk-1', 'LANG_EXTRA=ok']);
    expect(env.needsHostAlias).toBe(false);
  });

  it('maps a loopback gateway and telemetry endpoint to the host, with the signals chosen', () => {
    const env = containerEnv(
      { ANTHROPIC_AUTH_TOKEN: 't', ANTHROPIC_BASE_URL: 'http://localhost:4000', OTEL_EXPORTER_OTLP_HEADERS: 'a=b' },
      { endpoint: 'http://127.0.0.1:4317', protocol: 'grpc', signals: ['traces', 'logs'] },
    );
    expect(env.needsHostAlias).toBe(true);
    expect(env.env).toContain('ANTHROPIC_BASE_URL=http://host.docker.internal:4000');
    expect(env.env).toContain('OTEL_EXPORTER_OTLP_ENDPOINT=http://host.docker.internal:4317');
    expect(env.env).toContain('OTEL_TRACES_EXPORTER=otlp');
    expect(env.env).toContain('OTEL_METRICS_EXPORTER=none');
    expect(env.env).toContain('OTEL_EXPORTER_OTLP_HEADERS=a=b');
  });
});

describe('sandbox container shape', () => {
  const spec = {
    repo: 'my repo',
    gitDir: '/h/repo/.git',
    ticket: 'PROJ-7',
    runId: 'PROJ-7-1',
    branch: 'chalk/PROJ-7',
    ioDir: '/s/io',
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

  it('drops every capability, forbids privilege gain, mounts the store read-only and no socket', () => {
    const o = runContainerOptions({
      name: 'n',
      image: 'img',
      spec,
      env: { env: ['HOME=/home/chalk'], needsHostAlias: true },
      user: '1000:1000',
      tmpfsSize: '2g',
    });
    expect(o.HostConfig?.CapDrop).toEqual(['ALL']);
    expect(o.HostConfig?.SecurityOpt).toEqual(['no-new-privileges']);
    expect(o.HostConfig?.Binds).toEqual(['/h/repo/.git:/src.git:ro', '/s/io:/chalk:rw']);
    expect(JSON.stringify(o)).not.toContain('docker.sock');
    expect(o.HostConfig?.Tmpfs?.['/work']).toBe('rw,exec,mode=1777,size=2g');
    expect(o.HostConfig?.ExtraHosts).toEqual(['host.docker.internal:host-gateway']);
    expect(o.Labels).toEqual({
      'chalk.repo': 'my repo',
      'chalk.ticket': 'PROJ-7',
      'chalk.run': 'PROJ-7-1',
      'chalk.kind': 'run',
    });
    expect(o.User).toBe('1000:1000');
  });
});
