import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { EmbedFunction } from './service.js';

/** transformers.js, installed by `chalk decider up` beside the model (never a dependency of Chalk). */
export const TRANSFORMERS_PACKAGE = '@huggingface/transformers';
export const TRANSFORMERS_VERSION = '4.3.1';

/** The files transformers.js reads from the model's directory. */
export const MODEL_FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model.onnx'] as const;

export class EmbedModelMissing extends Error {
  override name = 'EmbedModelMissing';
}

interface TransformersModule {
  env: { allowRemoteModels: boolean; allowLocalModels: boolean; localModelPath: string };
  pipeline(
    task: 'feature-extraction',
    model: string,
    opts?: Record<string, unknown>,
  ): Promise<(texts: string[], opts: { pooling: 'cls'; normalize: boolean }) => Promise<{ tolist(): number[][] }>>;
}

/**
 * Loads BAAI/bge-small-en-v1.5 from `modelDir` (the snapshot `chalk decider up` downloaded)
 * with transformers.js from `runtimeDir` (where `up` installed it), offline: nothing is
 * fetched. CLS pooling and normalisation, as the model is meant to be used. A missing
 * model or runtime is one line naming `chalk decider up`.
 */
export async function loadEmbedFunction(opts: { modelDir: string; runtimeDir: string }): Promise<EmbedFunction> {
  const missing = MODEL_FILES.filter((f) => !existsSync(join(opts.modelDir, f)));
  if (missing.length > 0) {
    throw new EmbedModelMissing(
      `the embedding model is not installed (${opts.modelDir} lacks ${missing.join(', ')}): run chalk decider up`,
    );
  }
  let entry: string;
  try {
    entry = createRequire(join(opts.runtimeDir, 'package.json')).resolve(TRANSFORMERS_PACKAGE);
  } catch {
    throw new EmbedModelMissing(
      `the embedding runtime (${TRANSFORMERS_PACKAGE}) is not installed in ${opts.runtimeDir}: run chalk decider up`,
    );
  }
  const tf = (await import(pathToFileURL(entry).href)) as TransformersModule;
  tf.env.allowRemoteModels = false;
  tf.env.allowLocalModels = true;
  tf.env.localModelPath = dirname(opts.modelDir);
  const extract = await tf.pipeline('feature-extraction', basename(opts.modelDir), { dtype: 'fp32' });
  return async (texts) => (await extract(texts, { pooling: 'cls', normalize: true })).tolist();
}
