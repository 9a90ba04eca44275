import type { Clock } from '../ports/clock.js';

/**
 * A clock that moves only when told (and by every `sleep`, at once): a test
 * decides what time it is, so nothing depends on the machine's speed.
 */
export class ManualClock implements Clock {
  private ms: number;

  constructor(start: Date | number = Date.UTC(2026, 0, 1)) {
    this.ms = typeof start === 'number' ? start : start.getTime();
  }

  now(): Date {
    return new Date(this.ms);
  }

  advance(ms: number): void {
    this.ms += ms;
  }

  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    this.ms += ms;
  }
}
