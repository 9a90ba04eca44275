/**
 * Where things are in the egress container, shared by its daemon and the host that drives it.
 * Squid's front port is what sandboxes are given as their proxy; its second port, on loopback,
 * checks the TLS server name of every tunnel the front port lets through.
 */
export const EGRESS_PORTS = {
  /** HTTP(S)_PROXY of every sandbox. */
  proxy: 3128,
  /** Loopback only: the front port sends each CONNECT here, where the ClientHello is peeked at. */
  sni: 3129,
  /** Loopback only: Squid's access log, read by the daemon. */
  log: 3130,
  /** The model gateway, ANTHROPIC_BASE_URL of every sandbox's claude. */
  gateway: 8080,
  /** Every sandbox's DNS server: each query is answered REFUSED (dns.ts). */
  dns: 53,
} as const;

export const EGRESS_PATHS = {
  /** The daemon's own directory (sockets, Squid's configuration): a RAM disk. */
  run: '/run/chalk-egress',
  /** The host's control connection, one per run (the daemon's user only). */
  ctl: '/run/chalk-egress/ctl.sock',
  /** Squid's external ACL helper asks here (the proxy group). */
  policy: '/run/chalk-egress/policy.sock',
  squidConf: '/run/chalk-egress/squid.conf',
  /** Shipped in the image: error pages and the certificate Squid's peeking port needs (never used to bump). */
  errors: '/etc/chalk-egress/errors',
  unusedCert: '/etc/chalk-egress/unused.pem',
} as const;

/** The daemon's user and group id in the image (share/egress/Dockerfile makes it). */
export const DAEMON_ID = 10050;
/** Debian's `proxy` group, Squid's: its helper may ask the policy socket, nothing more. */
export const SQUID_GID = 13;

/** Carries, from the front port to the SNI port, the sandbox address a tunnel came from. */
export const SOURCE_HEADER = 'X-Chalk-Src';

/** The environment variable the host sets on the egress container for an upstream proxy. */
export const UPSTREAM_ENV = 'CHALK_EGRESS_UPSTREAM';
