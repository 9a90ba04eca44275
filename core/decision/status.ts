import type { Config } from '../config/config.js';
import type { Decider, HealthReport } from '../ports/decider.js';
import type { Store } from '../ports/store.js';
import { type Calibration, calibrationsAt, describeCalibration } from './calibration.js';
import type { DeciderStatusPart } from './status-part.js';
import { displayUrl, isLocalUrl, isTrusted, whatItReceives } from './trust.js';

/**
 * What `chalk decider status` and `chalk doctor` say about the decider: mode,
 * provider, URL (never credentials), trust, health, model and revision, and
 * the calibration numbers of each model recorded at that URL. Health is
 * checked here only (a command, never a loop); an untrusted address is sent
 * nothing, not even the health check.
 */
export interface DeciderStatus {
  mode: string;
  threshold: number;
  /** The selected provider (`hosted`, `local`, a plugin's), or null when no plugin provides one. */
  provider: string | null;
  url: string;
  trust: 'local' | 'trusted' | 'untrusted';
  /** Null when not checked (untrusted, or no provider). */
  health: HealthReport | null;
  model: string | null;
  revision: string | null;
  calibration: {
    /** False when the store could not be read: then `on` acts as shadow. */
    known: boolean;
    models: Calibration[];
    /** Whether `on` may act with some model at this URL. */
    calibrated: boolean;
    /** Not read, because CHALK_DECIDER=off (nothing asks the store then). */
    skipped?: boolean;
  };
  /** What an untrusted address would receive once trusted. */
  receives?: string[];
  /** What plugins added (kernel.deciderStatus), by part id: e.g. `local`, the local installation. */
  parts: Record<string, Record<string, unknown>>;
  /** The same parts as lines for the text form, in order. */
  partLines: string[];
}

export interface StatusInput {
  config: Config;
  provider: string | null;
  decider: Decider | null;
  store: Pick<Store, 'decisions'>;
  env?: NodeJS.ProcessEnv;
  /** Check health (default true; the doctor's decider line checks it on its own). */
  health?: boolean;
  /** Plugins' additions (kernel.deciderStatus); a part that throws is shown as its error. */
  parts?: readonly DeciderStatusPart[];
}

/** Reads each part; one that throws says so in its place and the others still show. */
export async function readParts(
  parts: readonly DeciderStatusPart[],
): Promise<{ parts: Record<string, Record<string, unknown>>; partLines: string[] }> {
  const out: Record<string, Record<string, unknown>> = {};
  const partLines: string[] = [];
  for (const p of parts) {
    try {
      const r = await p.read();
      if (!r) continue;
      out[p.id] = r.json;
      partLines.push(...r.lines);
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      out[p.id] = { error };
      partLines.push(`${p.id}: could not be read: ${error}`);
    }
  }
  return { parts: out, partLines };
}

export async function deciderStatus(o: StatusInput): Promise<DeciderStatus> {
  const raw = o.config.str('CHALK_DECIDER_URL');
  const url = o.decider?.entry.url ?? displayUrl(raw);
  const threshold = o.config.num('CHALK_DECIDER_THRESHOLD');
  const trust = isLocalUrl(raw) ? 'local' : isTrusted(raw, o.env) ? 'trusted' : 'untrusted';
  let health: HealthReport | null = null;
  if (o.health !== false && o.decider && !o.decider.unavailable()) {
    try {
      health = await o.decider.health();
    } finally {
      await o.decider.close?.();
    }
  }
  const mode = o.config.str('CHALK_DECIDER');
  let known = mode !== 'off';
  let models: Calibration[] = [];
  if (known) {
    try {
      models = calibrationsAt(await o.store.decisions.stuckAnswers(), url, threshold);
    } catch {
      known = false;
    }
  }
  const extra = await readParts(o.parts ?? []);
  return {
    mode,
    threshold,
    provider: o.provider,
    url,
    trust,
    health,
    model: health?.model ?? null,
    revision: health?.revision ?? null,
    calibration: {
      known,
      models,
      calibrated: models.some((c) => c.passes),
      ...(mode === 'off' ? { skipped: true } : {}),
    },
    ...(trust === 'untrusted' ? { receives: whatItReceives() } : {}),
    ...extra,
  };
}

/** The calibration numbers in one line per model, or why there are none. */
export function calibrationLines(s: DeciderStatus): string[] {
  if (s.calibration.skipped) return ['not read (CHALK_DECIDER=off; shadow records the answers that calibrate it)'];
  if (!s.calibration.known) return ['unknown: the database could not be read (CHALK_DECIDER=on acts as shadow)'];
  if (s.calibration.models.length === 0) {
    return [`no judged stuck answers from ${s.url} yet (CHALK_DECIDER=on acts as shadow until it is calibrated)`];
  }
  return s.calibration.models.map(describeCalibration);
}
