#!/usr/bin/env node
// A stand-in `npm install --prefix DIR ... @huggingface/transformers@V`: puts a stand-in
// transformers.js in DIR/node_modules with the API the embedding service's loader uses
// (`env`, `pipeline('feature-extraction', id)` reading the model from env.localModelPath),
// whose vectors are deterministic (sha256 of the text) and 384-dimensional.
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const args = process.argv.slice(2);
if (process.env.STANDIN_LOG) appendFileSync(process.env.STANDIN_LOG, `npm ${args.join(' ')}\n`);
const prefix = args[args.indexOf('--prefix') + 1];
const spec = args[args.length - 1];
const version = spec.slice(spec.lastIndexOf('@') + 1);
if (args[0] !== 'install' || !prefix || !spec.startsWith('@huggingface/transformers@')) {
  console.error(`stand-in npm: not a command Chalk runs: ${args.join(' ')}`);
  process.exit(2);
}
const dir = join(prefix, 'node_modules', '@huggingface', 'transformers');
mkdirSync(dir, { recursive: true });
writeFileSync(
  join(dir, 'package.json'),
  JSON.stringify({ name: '@huggingface/transformers', version, type: 'module', main: 'index.js' }),
);
writeFileSync(
  join(dir, 'index.js'),
  `import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
export const env = { allowRemoteModels: true, allowLocalModels: true, localModelPath: '/models/' };
export async function pipeline(task, id, opts) {
  if (task !== 'feature-extraction') throw new Error('stand-in: only feature-extraction');
  if (env.allowRemoteModels) throw new Error('stand-in: Chalk must load offline');
  const file = join(env.localModelPath, id, 'onnx', 'model.onnx');
  if (!existsSync(file)) throw new Error('stand-in: no model at ' + file);
  return async (texts, o) => ({
    tolist: () => texts.map((t) => {
      const seed = createHash('sha256').update(t).digest();
      const v = Array.from({ length: 384 }, (_, i) => ((seed[i % 32] + i) % 251) / 251 - 0.5);
      const n = Math.hypot(...v) || 1;
      return o && o.normalize ? v.map((x) => x / n) : v;
    }),
  });
}
`,
);
console.log('added 1 package');
