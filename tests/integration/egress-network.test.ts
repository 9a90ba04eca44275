import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { docker } from '../../plugins/sandbox-docker/docker.js';
import { EgressEngine, ensureNetwork } from '../../plugins/sandbox-docker/egress/engine.js';
import { dockerReachable } from './sandbox-helpers.js';

/**
 * The egress container's own network against the real engine, which lets two creations of one
 * name race (fleet's runs start two at a time): every chalk that asks gets the same network,
 * and what a lost race left is cleared, so the name is never ambiguous to the next run.
 */
const available = await dockerReachable();
const name = `chalk-egress-race-${process.pid}`;

async function named() {
  const d = await docker();
  return (await d.listNetworks({ filters: { name: [name] } })).filter((n) => n.Name === name);
}

describe.skipIf(!available)('the egress network', { timeout: 120_000 }, () => {
  afterAll(async () => {
    const d = await docker();
    for (const n of await named())
      await d
        .getNetwork(n.Id)
        .remove()
        .catch(() => undefined);
  });

  it('eight chalks asking at once all get one network, and only one is left', async () => {
    const d = await docker();
    const ids = await Promise.all(Array.from({ length: 8 }, () => ensureNetwork(d, name)));
    const left = await named();
    expect(new Set(ids).size).toBe(1);
    expect(left.map((n) => n.Id)).toEqual([ids[0]]);
  });

  it('six chalk processes asking at once, each with its own start, all get one network, and only one is left', async () => {
    const d = await docker();
    for (const n of await named()) await d.getNetwork(n.Id).remove();
    const state = mkdtempSync(join(tmpdir(), 'chalk-egress-race-'));
    const go = join(state, 'go');
    try {
      // Every child is connected to the engine and waiting before any asks, so they ask together.
      const kids = Array.from({ length: 6 }, () =>
        spawn(process.execPath, [join(import.meta.dirname, 'egress-network-child.mjs'), name, go], {
          env: { ...process.env, XDG_STATE_HOME: state },
          stdio: ['ignore', 'pipe', 'pipe'],
        }),
      );
      const ready: Promise<void>[] = [];
      const outs = kids.map((k) => {
        let out = '';
        let isReady: () => void = () => {};
        ready.push(new Promise<void>((resolve) => (isReady = resolve)));
        k.stdout.on('data', (c) => {
          out += c;
          if (out.startsWith('ready\n')) isReady();
        });
        k.stderr.on('data', (c) => (out += c));
        return new Promise<string>((resolve, reject) => {
          k.once('exit', (code) =>
            code === 0
              ? resolve(out.replace(/^ready\n/, '').trim())
              : reject(new Error(`child exited ${code}: ${out}`)),
          );
        });
      });
      await Promise.race([Promise.all(ready), Promise.all(outs)]);
      writeFileSync(go, '');
      const ids = await Promise.all(outs);
      expect(new Set(ids).size).toBe(1);
      expect((await named()).map((n) => n.Id)).toEqual([ids[0]]);
    } finally {
      rmSync(state, { recursive: true, force: true });
    }
  });

  it('two of the name left by an earlier race are made one again: the oldest is kept', async () => {
    const d = await docker();
    for (const n of await named()) await d.getNetwork(n.Id).remove();
    // What an older chalk's race left: two networks of the name, made one after the other.
    const first = await d.createNetwork({ Name: name, Driver: 'bridge' });
    await d.createNetwork({ Name: name, Driver: 'bridge' });
    expect(await named()).toHaveLength(2);
    await expect(d.getNetwork(name).inspect()).rejects.toThrow(/ambiguous/);
    expect(await ensureNetwork(d, name)).toBe(first.id);
    expect((await named()).map((n) => n.Id)).toEqual([first.id]);
  });

  it('four chalks starting the egress container at once all get the one container, running', async () => {
    // Its own upstream proxy names a container of its own (the name hashes it), so the machine's
    // shared one is left alone; nothing listens there, which the container does not need to start.
    const env = { ...process.env, HTTPS_PROXY: `http://127.0.0.1:${9000 + (process.pid % 500)}` };
    const d = await docker();
    const engines = Array.from({ length: 4 }, () => new EgressEngine({ env }));
    let ids: string[] = [];
    try {
      ids = (await Promise.all(engines.map((e) => e.container()))).map((c) => c.id);
      expect(new Set(ids).size).toBe(1);
      expect((await d.getContainer(ids[0] as string).inspect()).State.Running).toBe(true);
    } finally {
      for (const id of new Set(ids))
        await d
          .getContainer(id)
          .remove({ force: true })
          .catch(() => undefined);
    }
  });
});
