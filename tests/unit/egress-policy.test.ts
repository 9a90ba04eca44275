import { describe, expect, it } from 'vitest';
import { hostPort, parseHost } from '../../plugins/sandbox-docker/egress/daemon/names.js';
import {
  decide,
  type Policy,
  parseAllowEntry,
  parseAllowList,
  REGISTRIES,
  sniMismatch,
} from '../../plugins/sandbox-docker/egress/daemon/policy.js';

const policy = (mode: Policy['mode'], allow = ''): Policy => ({ mode, allow: parseAllowList(allow).entries });

describe('egress host names', () => {
  it('normalises case, one trailing dot and IDNA, and writes addresses in one form', () => {
    expect(parseHost('Registry.NPMJS.org.')).toEqual({ kind: 'name', host: 'registry.npmjs.org' });
    expect(parseHost('bücher.example')).toEqual({ kind: 'name', host: 'xn--bcher-kva.example' });
    expect(parseHost('1.2.3.4')).toEqual({ kind: 'ipv4', host: '1.2.3.4' });
    expect(parseHost('1.2.3.4.')).toEqual({ kind: 'ipv4', host: '1.2.3.4' });
    expect(parseHost('[0:0::1]')).toEqual({ kind: 'ipv6', host: '::1' });
    expect(parseHost('FE80::1')).toEqual({ kind: 'ipv6', host: 'fe80::1' });
    expect(hostPort({ kind: 'ipv6', host: '::1' }, 443)).toBe('[::1]:443');
  });

  it('refuses every spelling that is not one plain name or address', () => {
    for (const bad of [
      '',
      '127.1',
      '0x7f.0.0.1',
      '2130706433',
      '010.0.0.1',
      '256.1.1.1',
      'ex%61mple.com',
      'a_b.example.com',
      'a..b',
      '.example.com',
      'example.com..',
      '-a.example.com',
      'foo.123',
      'example.com:443',
      '[example.com]',
      'a'.repeat(64) + '.com',
    ]) {
      expect(parseHost(bad), bad).toBeNull();
    }
  });
});

describe('egress policy', () => {
  it('opens the package registries by default and nothing else', () => {
    const p = policy('registries');
    for (const r of REGISTRIES)
      for (const h of r.hosts) {
        const [host, port] = h.split(':');
        expect(decide(p, host as string, Number(port)).verdict, h).toBe('allow');
      }
    expect(decide(p, 'REGISTRY.npmjs.org.', 443).verdict).toBe('allow');
    expect(decide(p, 'registry.npmjs.org', 80).verdict).toBe('deny');
    expect(decide(p, 'api.anthropic.com', 443).verdict).toBe('deny');
    expect(decide(p, 'evil.registry.npmjs.org', 443).verdict).toBe('deny');
    const d = decide(p, 'Example.COM.', 443);
    expect(d).toEqual({
      verdict: 'deny',
      reason:
        "example.com:443 is not on this run's allowlist (CHALK_EGRESS=registries); the person running Chalk can allow it with CHALK_EGRESS_ALLOW=example.com:443. Do not retry.",
    });
  });

  it('refuses a bare address unless the run names that very address, which then passes the private-range rule', () => {
    expect(decide(policy('registries'), '93.184.216.34', 443).verdict).toBe('deny');
    expect(decide(policy('open'), '93.184.216.34', 443).verdict).toBe('allow');
    expect(decide(policy('off', '172.17.0.1:8080'), '172.17.0.1', 8080).verdict).toBe('allow-address');
    expect(decide(policy('off', '172.17.0.1:8080'), '172.17.0.1', 8081).verdict).toBe('deny');
    expect(decide(policy('open'), '127.1', 80)).toMatchObject({ verdict: 'deny' });
  });

  it('adds what the person allows to every mode, by port, subdomains only under a star', () => {
    const p = policy('off', 'example.com, *.corp.example:8443');
    expect(decide(p, 'registry.npmjs.org', 443).verdict).toBe('deny');
    expect(decide(p, 'example.com', 443).verdict).toBe('allow');
    expect(decide(p, 'example.com', 80).verdict).toBe('allow');
    expect(decide(p, 'example.com', 22).verdict).toBe('deny');
    expect(decide(p, 'a.corp.example', 8443).verdict).toBe('allow');
    expect(decide(p, 'corp.example', 8443).verdict).toBe('deny');
    expect(decide(policy('open'), 'anything.example', 5432).verdict).toBe('allow');
  });

  it('says which entry of a list is wrong', () => {
    expect(parseAllowList('a.com,b.com:99999,c_d.com').errors).toEqual([
      "'b.com:99999': port 99999 is not 1 to 65535",
      "'c_d.com': 'c_d.com' is not a host name or address",
    ]);
    expect(parseAllowEntry('*.10.0.0.1')).toBe("'*.10.0.0.1': only a name can have subdomains");
    expect(parseAllowEntry('[fd00::5]:8080')).toMatchObject({ host: { kind: 'ipv6', host: 'fd00::5' }, ports: [8080] });
    // The egress container's own loopback is never a sandbox's to reach.
    for (const own of ['127.0.0.1:3130', '[::1]:8080', '0.0.0.0:80']) expect(parseAllowEntry(own)).toMatch(/loopback/);
  });

  it('lets a TLS tunnel through only when its server name is the CONNECT name', () => {
    expect(sniMismatch('registry.npmjs.org', 'registry.npmjs.org')).toBeNull();
    expect(sniMismatch('Registry.npmjs.org.', 'REGISTRY.NPMJS.ORG')).toBeNull();
    expect(sniMismatch('registry.npmjs.org', 'evil.example.com')).toBe(
      'the TLS server name evil.example.com differs from the CONNECT name registry.npmjs.org',
    );
    expect(sniMismatch('registry.npmjs.org', '')).toBe('TLS to registry.npmjs.org without a server name (SNI)');
    expect(sniMismatch('10.0.0.1', '')).toBeNull();
    expect(sniMismatch('10.0.0.1', 'example.com')).toMatch(/on a connection to an address/);
  });
});
