/**
 * Runs handlers on the caller's thread (embedded mode given a handlers object). The event loop
 * is busy while a synchronous stage runs; the NATS daemon never uses this executor.
 */
import { type BlobStore, type DubConfig, type Job, type JobHandlers, type Logger } from '@dub/core';
import { SessionCache } from '@dub/onnx';
import type { JobExecutor, JobHooks } from './executor.js';
import { buildRuntime, callHandler } from './job-runtime.js';
import { readJobTextFromBlobs } from './job-text.js';
import type { NamedLimiter } from './limiter.js';

export interface InlineExecutorOptions {
  handlers: JobHandlers;
  store: BlobStore;
  config: DubConfig;
  logger: Logger;
  limiter: NamedLimiter;
}

export class InlineExecutor implements JobExecutor {
  private readonly sessions: SessionCache;
  constructor(private readonly o: InlineExecutorOptions) {
    this.sessions = new SessionCache({ device: o.config.device, threads: o.config.onnxThreads, logger: o.logger });
  }

  async run(job: Job, attempt: number, hooks: JobHooks, signal: AbortSignal): Promise<void> {
    const rt = buildRuntime(job, attempt, {
      store: this.o.store,
      config: this.o.config,
      sessions: this.sessions,
      logger: this.o.logger,
      signal,
      hooks,
      withLimit: (name, fn) => this.o.limiter.run(name, fn, signal),
    });
    try {
      await callHandler(this.o.handlers, await readJobTextFromBlobs(job, this.o.store), rt);
    } finally {
      // DUB_KEEP_MODELS=0 (`dub run`'s default): the job's models go with it; the next job loads what it needs
      if (this.o.config.keepModels === false) await this.sessions.disposeAll();
    }
  }

  providers(): Record<string, string> {
    return Object.fromEntries(this.sessions.providers);
  }

  async close(): Promise<void> {
    await this.sessions.disposeAll();
  }
}
