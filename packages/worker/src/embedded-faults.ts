/**
 * Disk-fault handling of the embedded queue: the backoff of a chore that failed (a job's record,
 * a file to remove), the timers of the chores waiting for their next try, and the log fields of
 * an error.
 */
import { errnoOf, isDubError } from '@dub/core';

/** The part of an error worth a log line: message and errno. */
export function errInfo(e: unknown): { err: string; errno?: string } {
  const errno = errnoOf(e) ?? (isDubError(e) && typeof e.details?.errno === 'string' ? e.details.errno : undefined);
  return { err: e instanceof Error ? e.message : String(e), ...(errno ? { errno } : {}) };
}

export interface BackoffOptions {
  /** First delay, doubling per fault in a row up to `max`. */
  base: number;
  max: number;
}

export class FaultBackoff {
  /** Disk faults in a row per chore: the next try's backoff. */
  private readonly faults = new Map<string, number>();
  /** Timers of chores waiting for their next try. */
  private readonly chores = new Set<NodeJS.Timeout>();

  constructor(readonly delays: BackoffOptions) {}

  /** The backoff of the next try of chore `key` after a disk fault (base doubling to its cap). */
  next(key: string): number {
    const n = (this.faults.get(key) ?? 0) + 1;
    this.faults.set(key, n);
    return this.delay(n);
  }

  /** The delay after `n` faults in a row. */
  delay(n: number): number {
    return Math.min(this.delays.max, this.delays.base * 2 ** (n - 1));
  }

  /** Chore `key` succeeded: its next fault starts from the base again. */
  clear(key: string): void {
    this.faults.delete(key);
  }

  /** Run `fn` after `delayMs` unless `cancel()` comes first. */
  after(delayMs: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.chores.delete(t);
      fn();
    }, delayMs);
    this.chores.add(t);
  }

  cancel(): void {
    for (const t of this.chores) clearTimeout(t);
    this.chores.clear();
  }
}
