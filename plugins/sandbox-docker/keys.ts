import { z } from 'zod';
import {
  bool,
  byteSize,
  got,
  type KeySpec,
  limitKey,
  machineKey as machine,
  oneOf,
  positiveInt,
  repoKey as repo,
} from '../../core/keys.js';
import { EGRESS_MODES, parseAllowList } from './egress/daemon/policy.js';

const allowList = (key: string) =>
  z.string().refine((v) => parseAllowList(v).errors.length === 0, {
    error: (i) => `${key} must be a comma list of host[:port] (${parseAllowList(String(i.input)).errors[0]})`,
  });

/** A Debian package name (Debian policy 5.6.1), so a name is never more than one word to apt. */
export const DEBIAN_PACKAGE = /^[a-z0-9][a-z0-9+.-]+$/;

/** A comma- or space-separated list, each once. */
export const packageList = (v: string) => [...new Set(v.split(/[\s,]+/).filter(Boolean))];

/**
 * What one sandbox may take of the machine: a repository may ask for less, or
 * for more only up to this machine's CHALK_CEILING_* (the environment's).
 */
const [MEMORY, MEMORY_CEILING] = limitKey({
  name: 'CHALK_SANDBOX_MEM_MB',
  default: '2048',
  help: 'MiB of memory one sandbox may use (its limit, with no swap beyond it)',
  schema: (key) => positiveInt(key, 'a positive whole number of MiB').transform(Number),
  ceiling: '4096',
  label: 'memory',
  show: (raw) => `${raw} MiB`,
});
const [TMPFS, TMPFS_CEILING] = limitKey({
  name: 'CHALK_TMPFS_SIZE',
  default: '4g',
  help: 'Size of the RAM disk the clone lives on',
  schema: (key) =>
    z.string().refine((v) => byteSize(v) !== null, {
      error: (i) => `${key} must be a size like 512m or 4g ${got(i.input)}`,
    }),
  ceiling: '8g',
  label: 'RAM disk',
  measure: byteSize,
});
const [CPUS, CPUS_CEILING] = limitKey({
  name: 'CHALK_SANDBOX_CPUS',
  default: 'auto',
  help: "CPUs one sandbox may use: auto (half the Docker engine's, at least 1) or a number like 1.5",
  schema: (key) =>
    z.string().refine((v) => v === 'auto' || (/^[0-9]+(\.[0-9]+)?$/.test(v) && Number(v) > 0 && Number(v) <= 1024), {
      error: (i) => `${key} must be 'auto' or a positive number of CPUs like 2 or 1.5 ${got(i.input)}`,
    }),
  ceiling: 'auto',
  label: 'CPUs',
});

/**
 * The sandbox plugin's configuration keys: the image, its RAM disk and limits, and the
 * telemetry the agent CLI inside exports. Declared here, not in core's table, because only
 * this plugin reads them; plugins/builtin.ts names this list so commands that boot no
 * kernel (`chalk config`, `chalk init`) know them without importing the plugin.
 */
export const SANDBOX_KEYS: readonly KeySpec[] = [
  MEMORY,
  TMPFS,
  CPUS,
  // The image is the person's choice: a repository's .chalk/config only proposes one (shown at the run's start).
  machine(
    'CHALK_IMAGE',
    'chalk-sandbox:local',
    "Sandbox image, this machine's choice (never .chalk/config's); set, it is used as it is (never built). Unset, the image comes from .devcontainer/devcontainer.json (once trusted), else CHALK_TOOLCHAIN on the default image, else the default",
  ),
  repo(
    'CHALK_SANDBOX_PACKAGES',
    '',
    'Extra Debian packages for the toolchain image, comma- or space-separated (e.g. libpq-dev, protobuf-compiler)',
    () =>
      z.string().refine((v) => packageList(v).every((p) => DEBIAN_PACKAGE.test(p)), {
        error: (i) =>
          `CHALK_SANDBOX_PACKAGES must be Debian package names (lower case letters, digits, + - .), comma-separated ${got(i.input)}`,
      }),
  ),
  repo(
    'CHALK_DEVCONTAINER',
    'auto',
    'auto: a trusted .devcontainer/devcontainer.json gives the sandbox image (chalk sandbox trust); off: it is ignored',
    () => oneOf('CHALK_DEVCONTAINER', ['auto', 'off']),
  ),
  MEMORY_CEILING,
  TMPFS_CEILING,
  CPUS_CEILING,
  machine(
    'CHALK_SANDBOX_BASE',
    '',
    'Base image chalk sandbox build builds on (any Debian-based image); empty: the base the image was made on, else node:22-bookworm-slim',
  ),
  machine(
    'CHALK_SANDBOX_RUNTIME',
    'runc',
    "The engine's container runtime for sandboxes: runc, or runsc (gVisor; the engine must have it registered)",
    () => oneOf('CHALK_SANDBOX_RUNTIME', ['runc', 'runsc']),
  ),
  machine(
    'CHALK_EGRESS',
    'registries',
    'What sandboxes may reach through the egress proxy: registries (the package registries), off (nothing) or open (any public host)',
    () => oneOf('CHALK_EGRESS', EGRESS_MODES),
  ),
  machine(
    'CHALK_EGRESS_ALLOW',
    '',
    'Hosts sandboxes may reach on top of CHALK_EGRESS: host[:port],... (*.example.com for subdomains; an address allows that address)',
    () => allowList('CHALK_EGRESS_ALLOW'),
  ),
  repo(
    'CHALK_EGRESS_HOSTS',
    '',
    "Hosts this repository's setup and tests need (host[:port],...); they apply once someone on this machine runs: chalk egress trust",
    () => allowList('CHALK_EGRESS_HOSTS'),
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
    () => bool('CHALK_OTEL_HEADERS'),
  ),
  machine('CHALK_OTEL_PROTOCOL', 'grpc', 'OTLP protocol', () =>
    oneOf('CHALK_OTEL_PROTOCOL', ['grpc', 'http/protobuf', 'http/json']),
  ),
  machine('CHALK_OTEL_SIGNALS', 'traces', 'Comma list of traces, metrics, logs', () =>
    z.string().refine((v) => v.split(',').every((s) => ['traces', 'metrics', 'logs'].includes(s.trim())), {
      error: (i) => `CHALK_OTEL_SIGNALS must be a comma list of 'traces', 'metrics' and 'logs' ${got(i.input)}`,
    }),
  ),
];

/** Everything the sandbox plugin declares. */
export const SANDBOX_PLUGIN_KEYS: readonly KeySpec[] = [...SANDBOX_KEYS, ...OTEL_KEYS];
