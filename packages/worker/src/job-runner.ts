/**
 * One delivery of a job, transport-independent: run the handler through an executor and decide
 * what happens next. Retryable errors retry with exponential backoff until `maxDeliver`
 * deliveries; permanent errors, and the last retryable one, fail the job with its failure event.
 * A delivery beyond `maxDeliver` (the worker died while running the previous one) is failed
 * without running, so a job never vanishes silently; so is a job whose locales are not the
 * contract's for their roles (job-checks.ts: invalid_input on arrival, before any stage).
 */
import { DubError, type EmittedEvent, type Job, type JobRuntime, type Logger, type Progress } from '@dub/core';
import type { JobExecutor, JobHooks } from './executor.js';
import { failureEvent, toJobError, type JobError } from './failure.js';
import { jobLocaleError } from './job-checks.js';
import { retryDelayMs, type ResolvedRunnerOptions } from './options.js';

export type Outcome =
  | { kind: 'done' }
  | { kind: 'retry'; delayMs: number; error: JobError }
  | { kind: 'failed'; error: JobError; event: EmittedEvent }
  /** Aborted by shutdown: hand the job back without counting it as a failure. */
  | { kind: 'aborted'; error: JobError };

/** What a delivery needs: the executor and options, and the runtime's event and follow-up publishing. */
export interface AttemptContext extends Pick<JobRuntime, 'emit' | 'enqueue'> {
  executor: JobExecutor;
  options: ResolvedRunnerOptions;
  logger: Logger;
  signal: AbortSignal;
}

/** Progress events at most every `intervalMs` per stage; the end of a stage (fraction 1) always. */
export function throttledProgress(intervalMs: number, job: Job, emit: (e: EmittedEvent) => Promise<void>, logger: Logger): (p: Progress) => void {
  const last = new Map<string, number>();
  const versionId = job.type === 'prepare-version' ? job.version.version_id : job.type === 'generate-version' ? job.version_id : undefined;
  return (p) => {
    const now = Date.now();
    const prev = last.get(p.stage);
    if (p.fraction < 1 && prev !== undefined && now - prev < intervalMs) return;
    last.set(p.stage, now);
    emit({ type: 'progress', job_type: job.type, stage: p.stage, fraction: Math.min(1, Math.max(0, p.fraction)), ...(versionId ? { version_id: versionId } : {}) }).catch((e: unknown) =>
      logger.warn({ job_id: job.job_id, err: (e as Error).message }, 'progress event not published'),
    );
  };
}

export async function runAttempt(job: Job, attempt: number, c: AttemptContext): Promise<Outcome> {
  const log = c.logger.child({ job_id: job.job_id, job_type: job.type, attempt });
  const o = c.options;
  if (attempt > o.maxDeliver) {
    const error = toJobError(
      new DubError('internal_error', `gave up after ${attempt - 1} deliveries: the worker running the job stopped without a result each time`, { retryable: false }),
    );
    log.error({ code: error.code }, 'job exceeded its deliveries; failing it');
    return { kind: 'failed', error, event: failureEvent(job, error) };
  }
  // On arrival, before any stage: locales that are not the contract's for their roles.
  const invalid = jobLocaleError(job);
  if (invalid) {
    const error = toJobError(invalid);
    log.error({ code: error.code, err: error.message }, 'job refused on arrival');
    return { kind: 'failed', error, event: failureEvent(job, error) };
  }
  const hooks: JobHooks = {
    emit: c.emit,
    enqueue: c.enqueue,
    progress: throttledProgress(o.progressIntervalMs, job, c.emit, log),
  };
  const t0 = performance.now();
  log.debug('job started');
  try {
    await c.executor.run(job, attempt, hooks, c.signal);
    log.info({ seconds: Number(((performance.now() - t0) / 1000).toFixed(3)) }, 'job done');
    return { kind: 'done' };
  } catch (e) {
    const error = toJobError(e);
    if (c.signal.aborted) {
      log.warn({ code: error.code }, 'job aborted by shutdown; handing it back');
      return { kind: 'aborted', error };
    }
    if (error.retryable && attempt < o.maxDeliver) {
      const delayMs = retryDelayMs(attempt, o);
      log.warn({ code: error.code, err: error.message, delay_ms: delayMs }, 'job failed; will retry');
      return { kind: 'retry', delayMs, error };
    }
    const event = failureEvent(job, error);
    log.error({ code: error.code, err: error.message, retryable: error.retryable }, 'job failed');
    return { kind: 'failed', error, event };
  }
}
