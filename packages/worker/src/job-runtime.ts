/**
 * The JobRuntime a handler receives, built the same way inline and inside a worker thread.
 */
import type { BlobStore, DubConfig, Job, JobHandlers, JobRuntime, Logger } from '@dub/core';
import type { SessionCache } from '@dub/onnx';
import type { JobHooks } from './executor.js';

export interface RuntimeParts {
  store: BlobStore;
  config: DubConfig;
  sessions: SessionCache;
  logger: Logger;
  signal: AbortSignal;
  hooks: JobHooks;
  withLimit: <T>(name: string, fn: () => Promise<T>) => Promise<T>;
}

export function jobLogger(logger: Logger, job: Job, attempt: number): Logger {
  return logger.child({ job_id: job.job_id, job_type: job.type, asset_id: job.asset_id, attempt });
}

export function buildRuntime(job: Job, attempt: number, p: RuntimeParts): JobRuntime {
  return {
    store: p.store,
    config: p.config,
    sessions: p.sessions,
    ctx: { logger: jobLogger(p.logger, job, attempt), signal: p.signal, onProgress: (pr) => p.hooks.progress(pr) },
    emit: (e) => p.hooks.emit(e),
    enqueue: (j) => p.hooks.enqueue(j),
    attempt,
    withLimit: p.withLimit,
  };
}

export function callHandler(handlers: JobHandlers, job: Job, rt: JobRuntime): Promise<void> {
  switch (job.type) {
    case 'prepare-asset':
      return handlers['prepare-asset'](job, rt);
    case 'prepare-version':
      return handlers['prepare-version'](job, rt);
    case 'generate-version':
      return handlers['generate-version'](job, rt);
  }
}
