/**
 * Promise helpers shared by the packages: a bounded wait, a lazily started promise that a failure
 * does not keep, and the last word of a stopped process.
 */
import type { Logger } from './logger.js';

/** Whether `p` settled (either way) within `ms`; the timer does not outlive the race. */
export async function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p.then(() => true, () => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** A kept promise's getter (see retryingOnce); `forget()` drops the kept promise and returns it. */
export type Retrying<A extends unknown[], T> = ((...args: A) => Promise<T>) & { forget(): Promise<T> | undefined };

/**
 * `start` run on the first call (with that call's arguments) and its promise kept for the next
 * ones; a promise that rejects is forgotten, so the call after a failure (a load, a listing)
 * starts again, as does the call after `forget()` (a dispose).
 */
export function retryingOnce<A extends unknown[], T>(start: (...args: A) => Promise<T>): Retrying<A, T> {
  let kept: Promise<T> | undefined;
  const get = (...args: A): Promise<T> => {
    if (!kept) {
      const p = start(...args);
      kept = p;
      p.catch(() => {
        if (kept === p) kept = undefined;
      });
    }
    return kept;
  };
  return Object.assign(get, {
    forget(): Promise<T> | undefined {
      const p = kept;
      kept = undefined;
      return p;
    },
  });
}

/**
 * After a process has closed all it opened: whatever still holds the event loop (a module's own
 * socket or timer) must not keep it alive. Logs what still runs after `ms` and exits with code 0.
 */
export function exitIfStillRunning(logger: Logger, message: string, ms = 3000): void {
  setTimeout(() => {
    logger.warn({ resources: process.getActiveResourcesInfo() }, message);
    process.exit(0);
  }, ms).unref();
}
