/**
 * Named semaphores: per-stage limits shared by every job of one worker process (e.g. one
 * GPU-heavy stage at a time per device). Names without a configured limit are unlimited.
 */
import { AbortedError } from '@dub/core';

interface Waiter {
  grant: () => void;
}

class Semaphore {
  private used = 0;
  private readonly waiters: Waiter[] = [];
  constructor(readonly capacity: number) {}

  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(new AbortedError('aborted while waiting for a stage limit'));
    return new Promise((resolve, reject) => {
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        this.used--;
        this.next();
      };
      const w: Waiter = {
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          this.used++;
          resolve(release);
        },
      };
      const onAbort = () => {
        const i = this.waiters.indexOf(w);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(new AbortedError('aborted while waiting for a stage limit'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(w);
      this.next();
    });
  }

  private next(): void {
    while (this.used < this.capacity && this.waiters.length) this.waiters.shift()!.grant();
  }

  get inUse(): number {
    return this.used;
  }
  get waiting(): number {
    return this.waiters.length;
  }
}

export class NamedLimiter {
  private readonly sems = new Map<string, Semaphore>();
  constructor(limits: Record<string, number>) {
    for (const [k, v] of Object.entries(limits)) this.sems.set(k, new Semaphore(v));
  }

  /** Wait for a slot of `name`; resolves to its release function (idempotent). */
  async acquire(name: string, signal?: AbortSignal): Promise<() => void> {
    const s = this.sems.get(name);
    if (!s) return () => {};
    return s.acquire(signal);
  }

  async run<T>(name: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const release = await this.acquire(name, signal);
    try {
      return await fn();
    } finally {
      release();
    }
  }

  /** Slots in use and waiters per limited name. */
  snapshot(): Record<string, { capacity: number; inUse: number; waiting: number }> {
    const out: Record<string, { capacity: number; inUse: number; waiting: number }> = {};
    for (const [k, s] of this.sems) out[k] = { capacity: s.capacity, inUse: s.inUse, waiting: s.waiting };
    return out;
  }
}
