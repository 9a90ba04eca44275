import { describe, expect, it } from 'vitest';
import { pickNetwork } from '../../plugins/sandbox-docker/egress/engine.js';

describe('which egress network every chalk uses', () => {
  const net = (Id: string, Created: string, Name = 'chalk-egress') => ({ Id, Name, Created });

  it('is the oldest of the exact name, whatever order the engine lists them in', () => {
    const a = net('bbb', '2026-12-02T08:00:00.000000001Z');
    const b = net('aaa', '2026-12-02T08:00:00.000000002Z');
    expect(pickNetwork([b, a], 'chalk-egress')).toBe(a);
    expect(pickNetwork([a, b], 'chalk-egress')).toBe(a);
  });

  it('breaks a tie of creation times by the lower id, the same for everyone', () => {
    const a = net('bbb', '2026-12-02T08:00:00Z');
    const b = net('aaa', '2026-12-02T08:00:00Z');
    expect(pickNetwork([a, b], 'chalk-egress')).toBe(b);
    expect(pickNetwork([b, a], 'chalk-egress')).toBe(b);
  });

  it('ignores networks the engine matched by a part of their name, and is null when none is left', () => {
    const other = net('ccc', '2026-01-01T00:00:00Z', 'chalk-egress-race-1');
    expect(pickNetwork([other], 'chalk-egress')).toBeNull();
    expect(pickNetwork([], 'chalk-egress')).toBeNull();
  });
});
