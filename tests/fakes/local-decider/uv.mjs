#!/usr/bin/env node
// A stand-in `uv` for tests of `chalk decider up` (this machine reaches no package index or
// model hub). It does what Chalk asks of uv, offline: `tool install` puts a stand-in
// strands-decider (strands-decider.mjs, a small server speaking decider protocol v1) on its bin
// directory, `tool dir --bin` and `tool list` describe it, and `tool run --from huggingface_hub
// hf download MODEL` makes a snapshot directory in $HF_HOME's hub cache and prints its path.
// Every call is appended to $STANDIN_LOG.
import { appendFileSync, chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const args = process.argv.slice(2);
const bin = process.env.STANDIN_UV_BIN;
if (process.env.STANDIN_LOG) appendFileSync(process.env.STANDIN_LOG, `uv ${args.join(' ')}\n`);
const is = (...words) => words.every((w, i) => args[i] === w);

if (is('--version')) {
  console.log('uv 0.0.0 (stand-in)');
} else if (is('tool', 'install')) {
  mkdirSync(bin, { recursive: true });
  const target = join(bin, 'strands-decider');
  writeFileSync(
    target,
    `#!/bin/sh\nexec "${process.execPath}" "${join(import.meta.dirname, 'strands-decider.mjs')}" "$@"\n`,
  );
  chmodSync(target, 0o755);
  console.log('Installed 1 executable: strands-decider');
} else if (is('tool', 'dir', '--bin')) {
  console.log(bin);
} else if (is('tool', 'list')) {
  console.log('strands-decider v0.1.0\n- strands-decider');
} else if (is('tool', 'run', '--from', 'huggingface_hub', 'hf', 'download')) {
  const model = args[6];
  const rev = args.includes('--revision') ? args[args.indexOf('--revision') + 1] : 'standin';
  const revision = `${rev}${'0'.repeat(40)}`.slice(0, 40);
  const snap = join(process.env.HF_HOME, 'hub', `models--${model.replace('/', '--')}`, 'snapshots', revision);
  mkdirSync(join(snap, 'onnx'), { recursive: true });
  if (model.startsWith('StrandsAgents/')) {
    writeFileSync(
      join(snap, 'hobson_config.json'),
      JSON.stringify({ base_model: 'Qwen/Qwen3.5-2B-Base', base_revision: 'b45e' }),
    );
  } else if (model === 'BAAI/bge-small-en-v1.5') {
    for (const f of ['config.json', 'tokenizer.json', 'tokenizer_config.json']) writeFileSync(join(snap, f), '{}');
    writeFileSync(join(snap, 'onnx', 'model.onnx'), 'stand-in');
  } else {
    writeFileSync(join(snap, 'config.json'), '{}');
  }
  console.log(snap);
} else {
  console.error(`stand-in uv: not a command Chalk runs: ${args.join(' ')}`);
  process.exit(2);
}
