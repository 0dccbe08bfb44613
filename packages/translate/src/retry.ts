/**
 * Retry policy of HTTP and process engines: exponential backoff with jitter, a server's
 * Retry-After honoured (capped), sleeps that end early when the caller cancels.
 */
import { AbortedError } from '@dub/core';

export interface RetryOptions {
  /** Attempts per batch, the first included (>= 1). */
  attempts: number;
  /** Delay before the second attempt; doubled each further attempt. */
  baseDelayMs: number;
  /** Upper bound of one backoff delay. */
  maxDelayMs: number;
  /** Upper bound of a delay asked for by a Retry-After header. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY: RetryOptions = { attempts: 4, baseDelayMs: 500, maxDelayMs: 15_000, maxRetryAfterMs: 60_000 };

/** Delay before attempt `attempt + 1` (attempt is 1-based): base * 2^(attempt-1), half of it jittered. */
export function backoffDelay(attempt: number, opts: RetryOptions, random: () => number = Math.random): number {
  const full = Math.min(opts.maxDelayMs, opts.baseDelayMs * 2 ** (attempt - 1));
  return Math.round(full / 2 + (random() * full) / 2);
}

/** Milliseconds asked for by a Retry-After header (delta-seconds or an HTTP date), if valid. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : Math.max(0, t - now);
}

/** Resolve after `ms`, or reject with AbortedError as soon as `signal` fires. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new AbortedError('cancelled while waiting to retry', { cause: signal.reason }));
    const onAbort = () => {
      clearTimeout(timer);
      reject(new AbortedError('cancelled while waiting to retry', { cause: signal?.reason }));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
