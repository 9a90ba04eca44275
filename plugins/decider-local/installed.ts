import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { writeHostFile } from '../../core/host.js';

const Model = z.object({ model: z.string(), revision: z.string(), path: z.string() });

/** What `chalk decider up` installed and measured, `<state>/decider/installed.json`. */
export const InstalledSchema = z.object({
  installedAt: z.string(),
  package: z.string(),
  packageVersion: z.string().nullable(),
  /** The strands-decider executable `uv tool install` put on its bin directory. */
  bin: z.string(),
  /** `--device` for `serve`, or null: strands-decider picks (CUDA, else CPU). */
  device: z.string().nullable(),
  decider: Model,
  base: z.object({ model: z.string(), revision: z.string() }).nullable(),
  embed: Model.extend({ runtime: z.string() }),
  /** The median of 5 warm questions, ms. */
  benchMs: z.number().nullable(),
  benchedAt: z.string().nullable(),
});
export type Installed = z.infer<typeof InstalledSchema>;

/** The record, or null when nothing is installed (or the file is not one: `chalk decider up` writes it again). */
export function readInstalled(file: string): Installed | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  try {
    const parsed = InstalledSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

export function writeInstalled(file: string, installed: Installed): void {
  writeHostFile(file, `${JSON.stringify(InstalledSchema.parse(installed), null, 2)}\n`);
}

/** `name@abcdef1`: the model and its revision's first 7 characters, as answers are recorded. */
export function modelRevision(m: { model: string; revision: string }): string {
  return `${m.model.split('/').pop()}@${m.revision.slice(0, 7)}`;
}
