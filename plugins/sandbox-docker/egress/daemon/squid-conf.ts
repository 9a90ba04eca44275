import { EGRESS_PATHS, EGRESS_PORTS, SOURCE_HEADER } from './layout.js';
import { REFUSED_RANGES } from './names.js';

/**
 * Squid's configuration. The front port answers sandboxes: each request is allowed by the
 * daemon's policy (an external ACL: run by source address, host, port), a name resolving to a
 * refused range is refused unless the run allows that address, and a refusal is a 403 with the
 * reason. A CONNECT the front port allows goes to the second port, on loopback, which peeks at
 * the ClientHello and splices the tunnel only when its server name is the CONNECT name (asked
 * of the daemon too); anything else, TLS that differs or bytes that are not TLS, is closed. A
 * refused CONNECT on a peeking port would be answered inside a TLS handshake (Squid bumps to
 * serve errors there), which is why the refusals live on a port that does not peek. No caching.
 */

export interface UpstreamProxy {
  host: string;
  port: number;
  /** `user:password`, percent-decoded, for the upstream's basic authentication. */
  login?: string;
}

/** An `http://[user:pass@]host:port` proxy URL; a one-line reason when it is not one Squid can chain to. */
export function parseUpstream(url: string): UpstreamProxy | string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'is not a URL';
  }
  if (u.protocol !== 'http:') return `uses ${u.protocol}//; the egress proxy chains to an http:// proxy only`;
  const host = u.hostname.replace(/^\[|\]$/g, '');
  if (!/^[A-Za-z0-9.:-]+$/.test(host)) return 'has a host Squid cannot use';
  const port = u.port === '' ? 80 : Number(u.port);
  const login = u.username === '' ? undefined : `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`;
  if (login !== undefined && /[\s"\\]/.test(login)) return 'has a user or password with spaces, quotes or backslashes';
  return { host, port, ...(login !== undefined ? { login } : {}) };
}

const helper = `/usr/bin/socat - UNIX-CONNECT:${EGRESS_PATHS.policy}`;
const ACL_OPTS = 'ttl=0 negative_ttl=0 children-max=2 children-startup=1 concurrency=100';

export function squidConf(upstream: UpstreamProxy | null): string {
  const lines = [
    `http_port ${EGRESS_PORTS.proxy} name=front`,
    `http_port 127.0.0.1:${EGRESS_PORTS.sni} name=sni ssl-bump tls-cert=${EGRESS_PATHS.unusedCert} generate-host-certificates=off`,
    'pid_filename none',
    'cache deny all',
    'cache_mem 0 MB',
    'shutdown_lifetime 1 seconds',
    'coredump_dir /tmp',
    'cache_log stdio:/dev/stderr',
    'netdb_filename none',
    'pinger_enable off',
    'via off',
    'forwarded_for delete',
    'httpd_suppress_version_string on',
    'visible_hostname chalk-egress',
    // A name's answer stays cached at least this long, so the address the refused-range check
    // saw is the one Squid connects to.
    'negative_dns_ttl 60 seconds',
    `error_directory ${EGRESS_PATHS.errors}`,
    'acl at_front myportname front',
    'acl at_sni myportname sni',
    'acl step1 at_step SslBump1',
    'acl step2 at_step SslBump2',
    'acl CONNECT method CONNECT',
    `acl refused_range dst ${REFUSED_RANGES.join(' ')}`,
    `external_acl_type chalk_front ${ACL_OPTS} %>lp %>a %>rm %>rd %>rP %ssl::>sni ${helper}`,
    `external_acl_type chalk_sni ${ACL_OPTS} %>lp %>{${SOURCE_HEADER}} %>rm %>rd %>rP %ssl::>sni ${helper}`,
    'acl front_ok external chalk_front',
    'acl sni_ok external chalk_sni',
    'acl by_address tag address',
    // The daemon reads both logs (accesslog.ts); the SNI port's line ends with the client's server name.
    'logformat front %ts.%03tu F %>a %rm %>rP %>Hs %Ss %err_code %>rd',
    `logformat sni %ts.%03tu S %{${SOURCE_HEADER}}>h %rm %>rP %>Hs %Ss %err_code %ssl::bump_mode %>rd %ssl::>sni`,
    `access_log tcp://127.0.0.1:${EGRESS_PORTS.log} logformat=front at_front`,
    `access_log tcp://127.0.0.1:${EGRESS_PORTS.log} logformat=sni at_sni`,
    'http_access deny manager',
    'http_access deny at_front !front_ok',
    'deny_info ERR_CHALK_EGRESS front_ok',
    'http_access deny at_front refused_range !by_address',
    'deny_info ERR_CHALK_PRIVATE refused_range',
    'http_access allow at_front',
    'http_access allow at_sni CONNECT',
    'http_access deny all',
    `request_header_access ${SOURCE_HEADER} deny all`,
    `request_header_add ${SOURCE_HEADER} "%>a" at_front`,
    `cache_peer 127.0.0.1 parent ${EGRESS_PORTS.sni} 0 no-query no-digest no-netdb-exchange name=chalk_sni`,
    'cache_peer_access chalk_sni allow at_front CONNECT',
    'cache_peer_access chalk_sni deny all',
    'never_direct allow at_front CONNECT',
    'ssl_bump peek step1',
    'ssl_bump splice step2 sni_ok',
    'ssl_bump terminate all',
  ];
  if (upstream) {
    const login = upstream.login ? ` login=${upstream.login}` : '';
    lines.push(
      `cache_peer ${upstream.host} parent ${upstream.port} 0 no-query no-digest no-netdb-exchange name=upstream${login}`,
      'cache_peer_access upstream allow at_sni',
      'cache_peer_access upstream allow at_front !CONNECT',
      'cache_peer_access upstream deny all',
      'never_direct allow all',
    );
  }
  return `${lines.join('\n')}\n`;
}
