import { describe, expect, it } from 'vitest';
import { forgeForOrigin, type OfferedForge } from '../../core/forge/select.js';
import type { Forge, OriginMatch } from '../../core/ports/forge.js';
import { RecordingForge } from '../../core/testing/index.js';
import { githubForge } from '../../plugins/forge-github/index.js';
import { gitlabForge } from '../../plugins/forge-gitlab/index.js';

/** CHALK_FORGE=auto asks each offered forge (Forge.matchOrigin); the core names none of them. */

const builtins: OfferedForge[] = [
  { name: 'github', value: githubForge() },
  { name: 'gitlab', value: gitlabForge() },
];

/** A third party's forge that claims its own host. */
const claiming = (name: string, host: string, match: OriginMatch = 'match'): OfferedForge => {
  const value: Forge = Object.assign(new RecordingForge(name), {
    matchOrigin: (url: string) => (url.includes(host) ? match : 'no'),
  });
  return { name, value };
};

describe('CHALK_FORGE=auto', () => {
  it.each([
    ['https://github.com/acme/shop.git', 'github'],
    ['git@github.com:acme/shop.git', 'github'],
    ['ssh://git@github.com/acme/shop.git', 'github'],
    ['https://gitlab.com/acme/shop.git', 'gitlab'],
    ['git@git.acme.internal:team/shop.git', 'gitlab'],
    // Not github.com, only a name that contains it.
    ['https://github.com.evil.example/acme/shop.git', 'gitlab'],
  ])('%s is %s, as the built-in forges say', (url, forge) => {
    expect(forgeForOrigin(url, builtins)).toBe(forge);
  });

  it("a third party's forge that claims the origin wins over a fallback", () => {
    const forges = [...builtins, claiming('acme', 'forge.acme.test')];
    expect(forgeForOrigin('https://forge.acme.test/shop.git', forges)).toBe('acme');
    expect(forgeForOrigin('https://other.example/shop.git', forges)).toBe('gitlab');
  });

  it('two forges claiming one origin are one clear refusal naming both and the setting', () => {
    const forges = [...builtins, claiming('acme', 'github.com')];
    expect(() => forgeForOrigin('https://github.com/acme/shop.git', forges)).toThrow(
      'CHALK_FORGE=auto: the origin https://github.com/acme/shop.git could be github or acme; set CHALK_FORGE to the one you use',
    );
  });

  it('with no forge that claims or may take the origin, auto is none', () => {
    expect(forgeForOrigin('https://gitlab.com/acme/shop.git', [builtins[0] as OfferedForge])).toBe('none');
    // A forge that declares nothing is never picked by auto.
    expect(forgeForOrigin('https://x.example/shop.git', [{ name: 'plain', value: new RecordingForge('plain') }])).toBe(
      'none',
    );
  });
});
