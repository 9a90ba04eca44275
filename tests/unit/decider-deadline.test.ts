import { afterEach, describe, expect, test, vi } from 'vitest';
import { CallDeadline } from '../../core/decider-client/deadline.js';

afterEach(() => {
  vi.useRealTimers();
});

const aborted = (d: CallDeadline) => new Promise<void>((resolve) => d.once('abort', () => resolve()));

describe('one shared timer watches every call deadline', () => {
  test('each call expires at its own time, earliest first, and says it timed out', async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const order: string[] = [];
    const late = new CallDeadline(1_000_300);
    const early = new CallDeadline(1_000_100);
    late.on('abort', () => order.push('late'));
    early.on('abort', () => order.push('early'));
    vi.advanceTimersByTime(99);
    expect(order).toEqual([]);
    vi.advanceTimersByTime(2);
    expect(order).toEqual(['early']);
    expect(early.timedOut()).toBe(true);
    expect(early.aborted).toBe(true);
    vi.advanceTimersByTime(200);
    expect(order).toEqual(['early', 'late']);
    expect(late.timedOut()).toBe(true);
  });

  test('a call that is done before its deadline never fires', () => {
    vi.useFakeTimers({ now: 2_000_000 });
    const d = new CallDeadline(2_000_050);
    const fired = vi.fn();
    d.on('abort', fired);
    d.done();
    vi.advanceTimersByTime(1_000);
    expect(fired).not.toHaveBeenCalled();
    expect(d.aborted).toBe(false);
  });

  test("the caller's cancel aborts at once and is not a timeout", async () => {
    const caller = new AbortController();
    const d = new CallDeadline(Date.now() + 10_000, caller.signal);
    const gone = aborted(d);
    caller.abort();
    await gone;
    expect(d.aborted).toBe(true);
    expect(d.timedOut()).toBe(false);
    d.done();
  });

  test('an already-cancelled caller aborts the call before it is sent', async () => {
    const caller = new AbortController();
    caller.abort();
    const d = new CallDeadline(Date.now() + 10_000, caller.signal);
    await aborted(d);
    expect(d.timedOut()).toBe(false);
    d.done();
  });
});
