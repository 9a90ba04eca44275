import { setTimeout as sleep } from 'node:timers/promises';
import type { Clock } from '../ports/clock.js';

export class SystemClock implements Clock {
  now(): Date {
    return new Date();
  }
  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    await sleep(ms, undefined, { signal });
  }
}
