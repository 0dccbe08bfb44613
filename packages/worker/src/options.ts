/**
 * Worker options shared by the NATS daemon and the embedded runner: public options are partial,
 * `resolveRunnerOptions()` fills every default once.
 */
import { ValidationError } from '@dub/core';

export interface RunnerOptions {
  /** Jobs run at once (one worker thread each in thread mode). Default 1. */
  concurrency?: number;
  /**
   * Deliveries a job gets before a retryable failure becomes its final failure event. Default 5.
   * A delivery that arrives after this many (e.g. the worker died while running the last one)
   * is failed without running.
   */
  maxDeliver?: number;
  /** Backoff before retry n is min(backoffBaseMs * 2^(n-1), backoffMaxMs). Defaults 1 s and 60 s. */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  /** How long a shutdown waits for jobs in hand before aborting them. Default 30 s. */
  drainTimeoutMs?: number;
  /** After the abort, how long a job gets to return before its thread is terminated. Default 5 s. */
  abortGraceMs?: number;
  /** Named per-stage limits (semaphores) handlers use through `rt.withLimit(name, fn)`. Default { gpu: 1 }. */
  limits?: Record<string, number>;
  /** Minimum interval between two progress events of one job and stage. Default 250 ms. */
  progressIntervalMs?: number;
}

export interface ResolvedRunnerOptions {
  concurrency: number;
  maxDeliver: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
  drainTimeoutMs: number;
  abortGraceMs: number;
  limits: Record<string, number>;
  progressIntervalMs: number;
}

function positiveInt(name: string, v: number | undefined, def: number, min = 1): number {
  if (v === undefined) return def;
  if (!Number.isInteger(v) || v < min) throw new ValidationError(`${name} must be an integer >= ${min}, got ${v}`, { field: name });
  return v;
}

export function resolveRunnerOptions(o: RunnerOptions = {}): ResolvedRunnerOptions {
  const limits: Record<string, number> = { gpu: 1, ...(o.limits ?? {}) };
  for (const [k, v] of Object.entries(limits)) positiveInt(`limits.${k}`, v, 1);
  return {
    concurrency: positiveInt('concurrency', o.concurrency, 1),
    maxDeliver: positiveInt('maxDeliver', o.maxDeliver, 5),
    backoffBaseMs: positiveInt('backoffBaseMs', o.backoffBaseMs, 1000, 0),
    backoffMaxMs: positiveInt('backoffMaxMs', o.backoffMaxMs, 60_000, 0),
    drainTimeoutMs: positiveInt('drainTimeoutMs', o.drainTimeoutMs, 30_000, 0),
    abortGraceMs: positiveInt('abortGraceMs', o.abortGraceMs, 5000, 0),
    limits,
    progressIntervalMs: positiveInt('progressIntervalMs', o.progressIntervalMs, 250, 0),
  };
}

/** Delay before delivery `attempt + 1` after a retryable failure of delivery `attempt` (1-based). */
export function retryDelayMs(attempt: number, o: Pick<ResolvedRunnerOptions, 'backoffBaseMs' | 'backoffMaxMs'>): number {
  return Math.min(o.backoffMaxMs, o.backoffBaseMs * 2 ** Math.max(0, attempt - 1));
}
