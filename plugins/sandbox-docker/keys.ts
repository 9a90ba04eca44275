import { z } from 'zod';
import {
  bool,
  got,
  type KeySpec,
  machineKey as machine,
  oneOf,
  positiveInt,
  repoKey as repo,
} from '../../core/config/schemas.js';

/**
 * The sandbox plugin's configuration keys: the image, its RAM disk and limits, and the
 * telemetry the agent CLI inside exports. Declared here, not in core's table, because only
 * this plugin reads them; plugins/builtin.ts names this list so commands that boot no
 * kernel (`chalk config`, `chalk init`) know them without importing the plugin.
 */
export const SANDBOX_KEYS: readonly KeySpec[] = [
  repo('CHALK_IMAGE', 'chalk-sandbox:local', 'Sandbox image; a non-default image is never built, only used'),
  repo(
    'CHALK_TMPFS_SIZE',
    '4g',
    'Size of the RAM disk the clone lives on',
    z.string().refine((v) => /^[1-9][0-9]*[kmg]?$/i.test(v), {
      error: (i) => `CHALK_TMPFS_SIZE must be a size like 512m or 4g ${got(i.input)}`,
    }),
  ),
  repo(
    'CHALK_SANDBOX_MEM_MB',
    '2048',
    'MiB of memory one sandbox may use (its limit, with no swap beyond it)',
    positiveInt('CHALK_SANDBOX_MEM_MB', 'a positive whole number of MiB').transform(Number),
  ),
  repo(
    'CHALK_SANDBOX_CPUS',
    'auto',
    "CPUs one sandbox may use: auto (half the Docker engine's, at least 1) or a number like 1.5",
    z.string().refine((v) => v === 'auto' || (/^[0-9]+(\.[0-9]+)?$/.test(v) && Number(v) > 0 && Number(v) <= 1024), {
      error: (i) => `CHALK_SANDBOX_CPUS must be 'auto' or a positive number of CPUs like 2 or 1.5 ${got(i.input)}`,
    }),
  ),
  machine(
    'CHALK_SANDBOX_BASE',
    '',
    'Base image chalk sandbox build builds on (any Debian-based image); empty: the base the image was made on, else node:22-bookworm-slim',
  ),
  machine(
    'CHALK_SANDBOX_CA',
    '',
    'Extra CA bundle carried into the sandbox image; empty: NODE_EXTRA_CA_CERTS, else SSL_CERT_FILE',
  ),
];

/** Claude Code's OpenTelemetry export from inside the sandbox (set on the agent exec only). */
export const OTEL_KEYS: readonly KeySpec[] = [
  machine('CHALK_OTEL_ENDPOINT', '', 'Export Claude Code telemetry to this OTLP endpoint'),
  machine(
    'CHALK_OTEL_HEADERS',
    'false',
    'true: also hand OTEL_EXPORTER_OTLP_HEADERS (often a token) to the agent CLI in the sandbox',
    bool('CHALK_OTEL_HEADERS'),
  ),
  machine(
    'CHALK_OTEL_PROTOCOL',
    'grpc',
    'OTLP protocol',
    oneOf('CHALK_OTEL_PROTOCOL', ['grpc', 'http/protobuf', 'http/json']),
  ),
  machine(
    'CHALK_OTEL_SIGNALS',
    'traces',
    'Comma list of traces, metrics, logs',
    z.string().refine((v) => v.split(',').every((s) => ['traces', 'metrics', 'logs'].includes(s.trim())), {
      error: (i) => `CHALK_OTEL_SIGNALS must be a comma list of 'traces', 'metrics' and 'logs' ${got(i.input)}`,
    }),
  ),
];

/** Everything the sandbox plugin declares. */
export const SANDBOX_PLUGIN_KEYS: readonly KeySpec[] = [...SANDBOX_KEYS, ...OTEL_KEYS];
