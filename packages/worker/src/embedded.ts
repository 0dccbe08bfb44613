/**
 * Embedded mode (`dub serve`, `dub run`): the same handlers and the same retry/fail semantics as
 * the NATS daemon, in-process behind the JobQueue and EventFeed interfaces. Jobs are persisted
 * to `<dataDir>/queue/jobs/<job_id>.json` before `enqueue()` resolves and events to
 * `<dataDir>/queue/events/` before they are accepted; a job's file is removed once it finished
 * and all its events were delivered, so a restart re-runs unfinished jobs (resuming from their
 * stage artifacts) and redelivers undelivered events.
 *
 * Disk faults (full or read-only data dir, EIO) never reject a promise nobody handles and never
 * strand a job: `enqueue()` rejects with a StorageError (503, retryable); a job whose attempt
 * cannot be recorded, or whose final event cannot be written, is queued again with backoff (a
 * failure event is written again without running the job; an event of a successful run makes it
 * run again, resuming from its stage artifacts, without counting the delivery); removing a
 * finished job's or a delivered event's file is tried again until it succeeds. Progress and
 * stage_done events that cannot be written are logged and skipped.
 *
 * The parts, a file each as on the NATS side: embedded-queue.ts (InProcessQueue: the job queue,
 * and the runtime's one object), embedded-event-feed.ts (event sink and feed), embedded-journal.ts
 * (the files on disk), embedded-faults.ts (the backoff of disk faults). This file builds them.
 */
import { ValidationError, loadConfig, silentLogger, type BlobStore, type DubConfig, type EventFeed, type JobHandlers, type JobQueue, type Logger } from '@dub/core';
import { InProcessQueue } from './embedded-queue.js';
import type { JobExecutor } from './executor.js';
import { DEFAULT_HANDLERS_MODULE } from './handlers-module.js';
import { InlineExecutor } from './inline-executor.js';
import { NamedLimiter } from './limiter.js';
import { resolveRunnerOptions, type RunnerOptions } from './options.js';
import { describeStore } from './store-spec.js';
import { ThreadPool } from './thread-pool.js';

export { InProcessQueue, type InProcessQueueOptions } from './embedded-queue.js';

export interface EmbeddedRuntimeOptions extends RunnerOptions {
  /** The queue lives in `<dataDir>/queue/`. */
  dataDir: string;
  store: BlobStore;
  /** Handlers run inline on this thread. Give this or `handlersModule`. */
  handlers?: JobHandlers;
  /**
   * Module exporting `jobHandlers`, run in worker threads (needs a store that threads can
   * reopen: FsBlobStore or NatsObjectBlobStore). Default '@dub/pipeline' when `handlers` is absent.
   */
  handlersModule?: string;
  config?: DubConfig;
  logger?: Logger;
  /** A job_id seen within this window is not run again after it finished. Default 1 h. */
  dedupWindowMs?: number;
  /**
   * Backoff between redeliveries of an event whose subscriber threw, and between tries of a disk
   * write or removal of the queue that failed: base and cap. Defaults 100 ms, 5 s.
   */
  redeliverBaseMs?: number;
  redeliverMaxMs?: number;
}

export interface EmbeddedRuntime {
  queue: JobQueue;
  events: EventFeed;
  /** The queue itself (metrics-like counters, `idle()` for tools and tests). */
  runner: InProcessQueue;
  /** Stop taking jobs, drain (then abort) the running ones, release sessions and threads. */
  close(): Promise<void>;
}

/** Build the embedded queue + event feed over `handlers` (inline) or `handlersModule` (threads). */
export function createEmbeddedRuntime(opts: EmbeddedRuntimeOptions): EmbeddedRuntime {
  const options = resolveRunnerOptions(opts);
  const logger = opts.logger ?? silentLogger;
  const config = opts.config ?? loadConfig();
  const limiter = new NamedLimiter(options.limits);
  let executor: JobExecutor;
  if (opts.handlers) {
    // Inline jobs share one session cache: with more than one at a time, a job that ends (or ends its
    // synthesis) would release models another job is running, so DUB_KEEP_MODELS=0 needs one job at a time.
    const shared = options.concurrency > 1 && config.keepModels === false;
    if (shared) logger.warn({ concurrency: options.concurrency }, 'DUB_KEEP_MODELS=0 is ignored: inline jobs run several at a time over one session cache, so their models are kept');
    executor = new InlineExecutor({ handlers: opts.handlers, store: opts.store, config: shared ? { ...config, keepModels: true } : config, logger, limiter });
  } else {
    const spec = describeStore(opts.store);
    if (!spec) throw new ValidationError('handlersModule needs a blob store that worker threads can reopen (FsBlobStore or NatsObjectBlobStore); pass handlers to run inline', { field: 'store' });
    executor = new ThreadPool({ size: options.concurrency, handlersModule: opts.handlersModule ?? DEFAULT_HANDLERS_MODULE, store: spec, config, logger, limiter, abortGraceMs: options.abortGraceMs });
  }
  const runner = new InProcessQueue(opts.dataDir, executor, {
    options,
    logger,
    ...(opts.dedupWindowMs !== undefined ? { dedupWindowMs: opts.dedupWindowMs } : {}),
    ...(opts.redeliverBaseMs !== undefined ? { redeliverBaseMs: opts.redeliverBaseMs } : {}),
    ...(opts.redeliverMaxMs !== undefined ? { redeliverMaxMs: opts.redeliverMaxMs } : {}),
  });
  return { queue: runner, events: runner, runner, close: () => runner.close() };
}
