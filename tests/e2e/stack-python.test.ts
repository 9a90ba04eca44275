import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as s from '../fakes/model-script.js';
import {
  chalkProject,
  e2eAvailable,
  explain,
  projectEnv,
  projectScenario,
  type Rig,
  runCli,
  startRig,
  tick,
} from './harness.js';
import { stackStory } from './stacks.js';

/**
 * pallets/markupsafe (Python, a src/ layout, pytest; its devcontainer.json names an image from
 * a registry, which is not here) through init, a detention, office hours and a request.
 */
const available = await e2eAvailable();

const COUNT_TAGS = (offset: string) => `"""Counting tags in markup."""

from __future__ import annotations


def count_tags(markup: str) -> int:
    """How many tags (opening or closing) the markup holds."""
    return markup.count("<")${offset}
`;

const COUNT_TAGS_TEST = `from markupsafe._tags import count_tags


def test_counts_both_tags() -> None:
    assert count_tags("<b>x</b>") == 2
`;

describe.skipIf(!available)('a Python library, as it is', { timeout: 900_000 }, () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await startRig();
  });
  afterAll(async () => {
    await rig?.close();
  });

  it('init finds pytest with src/ on the path and the python toolchain; the registry image is said and passed over; detention, office hours, request', async () => {
    const times = await stackStory(rig, {
      bundle: 'markupsafe.bundle',
      ticket: 'SAFE-1',
      checkpoint: 'count_tags counts the tags of some markup, with a test',
      initSays: [
        '  found    Python project (pytest) (pyproject.toml)',
        '  found    test command: PYTHONPATH=src python3 -m pytest -q (pyproject.toml, src/ layout)',
        '  found    toolchain: python (pyproject.toml)',
        "  found    base branch: main (origin's HEAD)",
        '  found    a dev container (.devcontainer/): the sandbox image comes from it once you review it and run: chalk sandbox trust',
      ],
      broken: [
        s.write('/work/repo/src/markupsafe/_tags.py', COUNT_TAGS(' - 1')),
        s.write('/work/repo/tests/test_count_tags.py', COUNT_TAGS_TEST),
      ],
      // markupsafe's conftest parametrizes every test by its escape module.
      failingTest: 'tests/test_count_tags.py::test_counts_both_tags[markupsafe._native]',
      assertion: /assert 1 == 2/,
      fix: { file: 'src/markupsafe/_tags.py', from: 'markup.count("<") - 1', to: 'markup.count("<")' },
      image: /^sandbox image chalk-sandbox:tc-[0-9a-f]{12}: toolchain python from \.chalk\/config$/,
      firstRun: (r) =>
        expect(r.stderr).toContain(
          '[SAFE-1] warning: .devcontainer/devcontainer.json names image mcr.microsoft.com/devcontainers/python:3, which is not present locally (Chalk pulls from no registry), so it is not used; pull or build it, then run again',
        ),
    });
    process.stdout.write(`python story: detained in ${times.detainedMs} ms, request in ${times.requestMs} ms\n`);
  });
});

/** The base the default image was built on: a local Debian image on any machine that has the default image. */
function localBase(): string {
  const r = spawnSync(
    'docker',
    ['image', 'inspect', '-f', '{{index .Config.Labels "chalk.base"}}', 'chalk-sandbox:local'],
    {
      encoding: 'utf8',
    },
  );
  return r.stdout.trim() || 'chalk-debian-base:bookworm';
}

const DEVCONTAINER_DOCKERFILE = `ARG BASE
FROM \${BASE}
RUN apt-get update && apt-get install -y --no-install-recommends python3 python3-pytest nodejs && rm -rf /var/lib/apt/lists/*
`;

describe.skipIf(!available)('a repository whose dev container builds its image', { timeout: 900_000 }, () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await startRig();
  });
  afterAll(async () => {
    await rig?.close();
  });

  it('is not used until the person trusts it; then Chalk builds it, layers itself on top, and the work is green to a request in it', async () => {
    const made: string[] = [];
    const sc = await projectScenario(rig, 'markupsafe.bundle', {
      ticket: 'SAFE-2',
      spec: '# SAFE-2: Tags\n\n## Context\n\nCount tags.\n\n## Checkpoints\n\n- [ ] count_tags counts tags, with a test\n',
      prepare: (main) => {
        writeFileSync(join(main, '.devcontainer', 'Dockerfile'), DEVCONTAINER_DOCKERFILE);
        writeFileSync(
          join(main, '.devcontainer', 'devcontainer.json'),
          `// built here, from a local image\n{\n  "name": "markupsafe",\n  "build": { "dockerfile": "Dockerfile", "args": { "BASE": "${localBase()}" } },\n}\n`,
        );
      },
    });
    try {
      const before = await chalkProject(rig, sc, ['doctor']);
      expect(before.stdout).toContain(
        '--    sandbox image: .devcontainer/devcontainer.json proposes the sandbox image (a build of .devcontainer/Dockerfile) and is not trusted on this machine, so it is not used; review it, then run: chalk sandbox trust (CHALK_DEVCONTAINER=off ignores it)',
      );
      const trust = await runCli(['sandbox', 'trust'], { cwd: sc.main, env: projectEnv(rig, sc), ticket: sc.ticket });
      expect(trust.stdout, explain(trust)).toMatch(
        /^trusted \.devcontainer\/devcontainer\.json \(a build of \.devcontainer\/Dockerfile\) {2}\S+ {2}sha256:[0-9a-f]{64}\n/,
      );
      rig.script({
        loops: [
          [
            s.write('/work/repo/src/markupsafe/_tags.py', COUNT_TAGS('')),
            s.write('/work/repo/tests/test_count_tags.py', COUNT_TAGS_TEST),
            tick(sc.ticket),
            s.loopDone('1', 'count_tags with its test'),
          ],
        ],
      });
      // No toolchain: pytest is in the dev container's image only, so a green rubric ran there.
      // The image's own Node (Debian's 18, whose fetch ignores HTTPS_PROXY) reaches the registry
      // through the egress proxy as in the default image: there is no other way out.
      const nodeFetch = `node -e "fetch('https://registry.npmjs.org/',{method:'HEAD'}).then(r=>process.exit(r.ok?0:3),e=>{console.error('node fetch:',e.cause?.code??e.message);process.exit(4)})"`;
      const r = await chalkProject(rig, sc, ['run'], {
        env: {
          CHALK_SPEC_CHECK: 'false',
          CHALK_TOOLCHAIN: '',
          CHALK_TEST_CMD: `${nodeFetch} && PYTHONPATH=src python3 -m pytest -q`,
        },
        timeoutMs: 600_000,
      });
      // Removed at the end whatever the outcome: a kept image would skip the next run's build.
      made.push(...(r.stdout.match(/chalk-devcontainer:[0-9a-f]{12}|chalk-sandbox:dc-[0-9a-f]{12}/g) ?? []));
      expect(r.code, explain(r)).toBe(0);
      expect(r.stdout).toMatch(
        /^building the dev container's image chalk-devcontainer:[0-9a-f]{12} from \.devcontainer\/Dockerfile \(trusted on this machine\)$/m,
      );
      expect(r.lines).toContain('loop 1 (continue) started');
      expect(r.lines.find((l) => l.startsWith('sandbox image '))).toMatch(
        /^sandbox image chalk-sandbox:dc-[0-9a-f]{12}: \.devcontainer\/devcontainer\.json: a build of \.devcontainer\/Dockerfile, trusted here$/,
      );
      expect(sc.forge.calls().filter((c) => c.argv[0] === 'pr' && c.argv[1] === 'create')).toHaveLength(1);
      process.stdout.write(`devcontainer story: built and green to a request in ${r.ms} ms\n`);
    } finally {
      sc.dispose();
      // The images this test made (the toolchain images are shared by the stack tests and kept).
      if (made.length > 0) spawnSync('docker', ['image', 'rm', '-f', ...new Set(made)]);
    }
  });
});
