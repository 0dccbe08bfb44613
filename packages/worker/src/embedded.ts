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
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import {
  asStorageError,
  ConflictError,
  errnoOf,
  isDubError,
  ValidationError,
  loadConfig,
  parseJob,
  silentLogger,
  type BlobStore,
  type DubConfig,
  type EmittedEvent,
  type EventFeed,
  type EventSink,
  type Job,
  type JobHandlers,
  type JobQueue,
  type Logger,
  type Subscription,
  type WorkerEvent,
  type WorkerEventHandler,
} from '@dub/core';
import { completeEvent } from './events.js';
import type { JobExecutor } from './executor.js';
import { DEFAULT_HANDLERS_MODULE } from './handlers-module.js';
import { InlineExecutor } from './inline-executor.js';
import { runAttempt, type Outcome } from './job-runner.js';
import { NamedLimiter } from './limiter.js';
import { resolveRunnerOptions, type ResolvedRunnerOptions, type RunnerOptions } from './options.js';
import { describeStore } from './store-spec.js';
import { ThreadPool } from './thread-pool.js';

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

interface JobRecord {
  job: Job;
  attempt: number;
  finished: boolean;
  state: 'queued' | 'running' | 'waiting' | 'finished';
  pendingEvents: number;
  timer?: NodeJS.Timeout;
  removing?: boolean;
  /** The failure event of a failed job not yet written: written again, the job not run again. */
  failure?: EmittedEvent;
}

interface PendingEvent {
  seq: number;
  jobId: string;
  event: WorkerEvent;
  file: string;
}

interface JobFile {
  job: Job;
  attempt: number;
  finished: boolean;
}

/** Write `file` whole or not at all; a disk fault rejects with a StorageError saying `what` failed. */
async function writeAtomic(file: string, data: string, what: string): Promise<void> {
  const tmp = `${file}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
  try {
    await fsp.writeFile(tmp, data);
    await fsp.rename(tmp, file);
  } catch (e) {
    await fsp.rm(tmp, { force: true }).catch(() => undefined);
    throw asStorageError(e, `queue: ${what}`);
  }
}

/** The part of an error worth a log line: message and errno. */
function errInfo(e: unknown): { err: string; errno?: string } {
  const errno = errnoOf(e) ?? (isDubError(e) && typeof e.details?.errno === 'string' ? e.details.errno : undefined);
  return { err: e instanceof Error ? e.message : String(e), ...(errno ? { errno } : {}) };
}

const SEQ_WIDTH = 16;

export class InProcessQueue implements JobQueue, EventFeed, EventSink {
  private readonly jobsDir: string;
  private readonly eventsDir: string;
  private readonly records = new Map<string, JobRecord>();
  private readonly finishedAt = new Map<string, number>();
  private readonly ready: string[] = [];
  private readonly events: PendingEvent[] = [];
  private readonly running = new Map<string, Promise<void>>();
  private readonly abort = new AbortController();
  private readonly o: ResolvedRunnerOptions;
  private readonly logger: Logger;
  private readonly dedupWindowMs: number;
  private readonly redeliver: { base: number; max: number };
  private seq = 0;
  private subscriber: WorkerEventHandler | undefined;
  private delivering: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  private idleWaiters: (() => void)[] = [];
  /** Disk faults in a row per chore (a job's record, a file to remove): the next try's backoff. */
  private readonly faults = new Map<string, number>();
  /** Timers of chores waiting for their next try. */
  private readonly chores = new Set<NodeJS.Timeout>();
  /** Files of finished jobs and delivered events whose removal failed and is tried again. */
  private readonly leftovers = new Set<string>();

  constructor(
    dataDir: string,
    private readonly executor: JobExecutor,
    opts: { options: ResolvedRunnerOptions; logger: Logger; dedupWindowMs?: number; redeliverBaseMs?: number; redeliverMaxMs?: number },
  ) {
    this.jobsDir = path.join(dataDir, 'queue', 'jobs');
    this.eventsDir = path.join(dataDir, 'queue', 'events');
    fs.mkdirSync(this.jobsDir, { recursive: true });
    fs.mkdirSync(this.eventsDir, { recursive: true });
    this.o = opts.options;
    this.logger = opts.logger;
    this.dedupWindowMs = opts.dedupWindowMs ?? 3_600_000;
    this.redeliver = { base: opts.redeliverBaseMs ?? 100, max: opts.redeliverMaxMs ?? 5000 };
    this.load();
    this.pump();
  }

  /** Reload persisted jobs and undelivered events (synchronously, at construction). */
  private load(): void {
    for (const name of fs.readdirSync(this.jobsDir).sort()) {
      if (!name.endsWith('.json')) continue;
      const file = path.join(this.jobsDir, name);
      try {
        const f = JSON.parse(fs.readFileSync(file, 'utf8')) as JobFile;
        const job = parseJob(f.job);
        this.records.set(job.job_id, { job, attempt: f.attempt, finished: f.finished, state: f.finished ? 'finished' : 'queued', pendingEvents: 0 });
        if (!f.finished) this.ready.push(job.job_id);
      } catch (e) {
        this.logger.error({ file, err: (e as Error).message }, 'unreadable persisted job; moved aside');
        fs.renameSync(file, `${file}.bad`);
      }
    }
    for (const name of fs.readdirSync(this.eventsDir).sort()) {
      if (!name.endsWith('.json')) continue;
      const file = path.join(this.eventsDir, name);
      try {
        const p = JSON.parse(fs.readFileSync(file, 'utf8')) as { seq: number; job_id: string; event: WorkerEvent };
        this.events.push({ seq: p.seq, jobId: p.job_id, event: p.event, file });
        this.seq = Math.max(this.seq, p.seq);
        const r = this.records.get(p.job_id);
        if (r) r.pendingEvents++;
      } catch (e) {
        this.logger.error({ file, err: (e as Error).message }, 'unreadable persisted event; moved aside');
        fs.renameSync(file, `${file}.bad`);
      }
    }
    if (this.records.size || this.events.length) this.logger.info({ jobs: this.ready.length, events: this.events.length }, 'resuming persisted jobs and events');
    for (const r of this.records.values()) void this.maybeRemove(r);
  }

  private jobFile(jobId: string): string {
    return path.join(this.jobsDir, `${encodeURIComponent(jobId)}.json`);
  }

  private persist(r: JobRecord): Promise<void> {
    const f: JobFile = { job: r.job, attempt: r.attempt, finished: r.finished };
    return writeAtomic(this.jobFile(r.job.job_id), JSON.stringify(f), `recording job ${r.job.job_id}`);
  }

  /** The backoff of the next try of chore `key` after a disk fault (redeliver base doubling to its cap). */
  private faultDelay(key: string): number {
    const n = (this.faults.get(key) ?? 0) + 1;
    this.faults.set(key, n);
    return Math.min(this.redeliver.max, this.redeliver.base * 2 ** (n - 1));
  }

  /** Run `fn` after `delayMs` unless the queue closes first. */
  private after(delayMs: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.chores.delete(t);
      fn();
    }, delayMs);
    this.chores.add(t);
  }

  /**
   * Queue `r` again after a disk fault (backoff per job). While the queue closes it stays queued
   * and persisted: the next start runs it.
   */
  private requeueLater(r: JobRecord, e: unknown, msg: string): void {
    const delay = this.faultDelay(`job:${r.job.job_id}`);
    this.logger.error({ job_id: r.job.job_id, ...errInfo(e), delay_ms: delay }, msg);
    r.state = 'queued';
    if (this.closing) return;
    r.state = 'waiting';
    r.timer = setTimeout(() => {
      r.timer = undefined;
      r.state = 'queued';
      this.ready.push(r.job.job_id);
      this.pump();
    }, delay);
  }

  /** Remove a file of the queue; on a disk fault, try again later (never rejects). */
  private async removeFile(file: string): Promise<boolean> {
    try {
      await fsp.rm(file, { force: true });
    } catch (e) {
      this.leftovers.add(file);
      const delay = this.faultDelay(file);
      this.logger.error({ file: path.relative(path.dirname(this.jobsDir), file), ...errInfo(asStorageError(e, 'queue: removing a file')), delay_ms: delay }, 'could not remove a file of the queue; trying again');
      this.after(delay, () => void this.removeFile(file));
      return false;
    }
    this.faults.delete(file);
    if (this.leftovers.delete(file)) this.checkIdle();
    return true;
  }

  async enqueue(job: Job): Promise<void> {
    const j = parseJob(job);
    if (this.closing) throw new ValidationError('the queue is closed', { field: 'queue' });
    const done = this.finishedAt.get(j.job_id);
    if (this.records.has(j.job_id) || (done !== undefined && Date.now() - done < this.dedupWindowMs)) {
      this.logger.debug({ job_id: j.job_id }, 'duplicate job_id; not enqueued again');
      return;
    }
    const r: JobRecord = { job: j, attempt: 0, finished: false, state: 'queued', pendingEvents: 0 };
    this.records.set(j.job_id, r);
    try {
      await this.persist(r);
    } catch (e) {
      this.records.delete(j.job_id);
      this.checkIdle();
      throw e;
    }
    this.ready.push(j.job_id);
    this.pump();
  }

  private pump(): void {
    while (!this.closing && this.running.size < this.o.concurrency && this.ready.length) {
      const id = this.ready.shift()!;
      const r = this.records.get(id);
      if (!r || r.state !== 'queued') continue;
      const p = this.start(r)
        .catch((e: unknown) => this.requeueLater(r, e, 'job could not be recorded on disk; queued again'))
        .finally(() => {
          this.running.delete(id);
          this.pump();
          this.checkIdle();
        });
      this.running.set(id, p);
    }
  }

  private async start(r: JobRecord): Promise<void> {
    r.state = 'running';
    if (r.failure) return this.recordFailure(r, r.failure);
    r.attempt++;
    try {
      await this.persist(r);
    } catch (e) {
      // The delivery did not happen: it is not counted.
      r.attempt--;
      throw e;
    }
    const job = r.job;
    // A disk fault of the queue itself (an event or a follow-up job not written) is not the job's failure.
    let queueFault: unknown;
    const outcome: Outcome = await runAttempt(job, r.attempt, {
      executor: this.executor,
      options: this.o,
      logger: this.logger,
      signal: this.abort.signal,
      emit: async (e) => {
        try {
          await this.emitFor(job, e);
        } catch (err) {
          if (e.type === 'progress' || e.type === 'stage_done') {
            this.logger.warn({ job_id: job.job_id, event: e.type, ...errInfo(err) }, 'event not written; skipped');
            return;
          }
          queueFault = err;
          throw err;
        }
      },
      enqueue: async (j) => {
        try {
          await this.enqueue(j);
        } catch (err) {
          if (isDubError(err) && err.code === 'storage_unavailable') queueFault = err;
          throw err;
        }
      },
    });
    if (queueFault !== undefined && (outcome.kind === 'retry' || outcome.kind === 'failed')) {
      r.attempt--;
      return this.requeueLater(r, queueFault, 'the queue could not write what the job produced; the job runs again once the disk accepts writes');
    }
    this.faults.delete(`job:${job.job_id}`);
    switch (outcome.kind) {
      case 'done':
        return this.finish(r);
      case 'failed':
        return this.recordFailure(r, outcome.event);
      case 'retry':
        r.state = 'waiting';
        r.timer = setTimeout(() => {
          r.timer = undefined;
          r.state = 'queued';
          this.ready.push(job.job_id);
          this.pump();
        }, outcome.delayMs);
        return;
      case 'aborted':
        r.state = 'queued';
        return;
    }
  }

  /** Write the failure event of a failed job, then finish it; if it cannot be written, queue the job again. */
  private async recordFailure(r: JobRecord, event: EmittedEvent): Promise<void> {
    try {
      await this.emitFor(r.job, event);
    } catch (e) {
      r.failure = event;
      return this.requeueLater(r, e, 'failure event not written; the job is queued again to write it');
    }
    r.failure = undefined;
    this.faults.delete(`job:${r.job.job_id}`);
    return this.finish(r);
  }

  private async finish(r: JobRecord): Promise<void> {
    r.finished = true;
    try {
      await this.persist(r);
    } catch (e) {
      // Its events are written: the file goes once they are delivered. A restart before that runs the job again.
      this.logger.warn({ job_id: r.job.job_id, ...errInfo(e) }, 'could not record the job as finished');
    }
    // Only now may the file go: were the state 'finished' while the write is in flight, the last
    // event's delivery could remove the file first and the write would then put it back.
    r.state = 'finished';
    await this.maybeRemove(r);
  }

  /** Remove a finished job whose events were delivered (never rejects: a failed removal is tried again). */
  private async maybeRemove(r: JobRecord): Promise<void> {
    if (r.state !== 'finished' || r.pendingEvents > 0 || this.records.get(r.job.job_id) !== r || r.removing) return;
    r.removing = true;
    try {
      await fsp.rm(this.jobFile(r.job.job_id), { force: true });
    } catch (e) {
      r.removing = false;
      const delay = this.faultDelay(`rm:${r.job.job_id}`);
      this.logger.error({ job_id: r.job.job_id, ...errInfo(asStorageError(e, 'queue: removing a finished job')), delay_ms: delay }, 'could not remove a finished job; trying again');
      this.after(delay, () => void this.maybeRemove(r));
      return;
    }
    this.faults.delete(`rm:${r.job.job_id}`);
    this.records.delete(r.job.job_id);
    this.finishedAt.set(r.job.job_id, Date.now());
    this.pruneFinished();
    this.checkIdle();
  }

  private pruneFinished(): void {
    const cutoff = Date.now() - this.dedupWindowMs;
    for (const [id, at] of this.finishedAt) {
      if (at >= cutoff) break;
      this.finishedAt.delete(id);
    }
  }

  private emitFor(job: Job, e: EmittedEvent): Promise<void> {
    return this.publish(completeEvent(job, e));
  }

  /** EventSink: persist the event, then queue it for the subscriber. */
  async publish(event: WorkerEvent): Promise<void> {
    const seq = ++this.seq;
    const file = path.join(this.eventsDir, `${String(seq).padStart(SEQ_WIDTH, '0')}.json`);
    await writeAtomic(file, JSON.stringify({ seq, job_id: event.job_id, event }), `writing a ${event.type} event of job ${event.job_id}`);
    const r = this.records.get(event.job_id);
    if (r) r.pendingEvents++;
    // Keep seq order even when two writes finish out of order.
    let i = this.events.length;
    while (i > 0 && this.events[i - 1].seq > seq) i--;
    this.events.splice(i, 0, { seq, jobId: event.job_id, event, file });
    this.deliver();
  }

  async subscribe(handler: WorkerEventHandler): Promise<Subscription> {
    if (this.subscriber) throw new ConflictError('the embedded event feed has a subscriber already');
    this.subscriber = handler;
    this.deliver();
    return {
      stop: async () => {
        if (this.subscriber === handler) this.subscriber = undefined;
        await this.delivering;
      },
    };
  }

  private deliver(): void {
    if (this.delivering || !this.subscriber) return;
    this.delivering = this.deliverLoop()
      .catch((e: unknown) => this.logger.error(errInfo(e), 'event delivery stopped by an error; resuming'))
      .finally(() => {
        this.delivering = undefined;
        if (this.events.length && this.subscriber) this.deliver();
      });
  }

  private async deliverLoop(): Promise<void> {
    let failures = 0;
    while (this.events.length && this.subscriber) {
      const handler = this.subscriber;
      const pe = this.events[0];
      try {
        await handler(pe.event);
      } catch (e) {
        failures++;
        const delay = Math.min(this.redeliver.max, this.redeliver.base * 2 ** (failures - 1));
        this.logger.warn({ event: pe.event.type, job_id: pe.jobId, err: (e as Error).message, delay_ms: delay }, 'event subscriber failed; delivering the event again');
        await new Promise((r) => setTimeout(r, delay));
        continue;
      }
      failures = 0;
      this.events.shift();
      // Delivered: were its file left behind (and tried again) a restart delivers it again, which is harmless.
      await this.removeFile(pe.file);
      const r = this.records.get(pe.jobId);
      if (r) {
        r.pendingEvents--;
        await this.maybeRemove(r);
      }
      this.checkIdle();
    }
  }

  /** Jobs known (queued, running, waiting to retry, or finished with events undelivered). */
  get size(): number {
    return this.records.size;
  }

  get inFlight(): number {
    return this.running.size;
  }

  get pendingEvents(): number {
    return this.events.length;
  }

  /** Resolves when no job is queued or running and every event was delivered. */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private isIdle(): boolean {
    return this.records.size === 0 && this.running.size === 0 && this.events.length === 0 && this.leftovers.size === 0;
  }

  private checkIdle(): void {
    if (!this.isIdle()) return;
    const w = this.idleWaiters;
    this.idleWaiters = [];
    for (const f of w) f();
  }

  /** Stop taking jobs; wait `drainTimeoutMs` for running ones, then abort them (they stay persisted). */
  close(): Promise<void> {
    this.closing ??= (async () => {
      for (const r of this.records.values()) if (r.timer) clearTimeout(r.timer);
      for (const t of this.chores) clearTimeout(t);
      this.chores.clear();
      const all = Promise.allSettled([...this.running.values()]);
      let timer: NodeJS.Timeout | undefined;
      const drained = await Promise.race([all.then(() => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), this.o.drainTimeoutMs)))]);
      clearTimeout(timer);
      if (!drained) {
        this.logger.warn({ jobs: [...this.running.keys()] }, 'drain timeout; aborting running jobs');
        this.abort.abort('worker shutting down');
        await all;
      }
      this.subscriber = undefined;
      await this.delivering;
      await this.executor.close();
    })();
    return this.closing;
  }
}

/** Build the embedded queue + event feed over `handlers` (inline) or `handlersModule` (threads). */
export function createEmbeddedRuntime(opts: EmbeddedRuntimeOptions): EmbeddedRuntime {
  const options = resolveRunnerOptions(opts);
  const logger = opts.logger ?? silentLogger;
  const config = opts.config ?? loadConfig();
  const limiter = new NamedLimiter(options.limits);
  let executor: JobExecutor;
  if (opts.handlers) {
    executor = new InlineExecutor({ handlers: opts.handlers, store: opts.store, config, logger, limiter });
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
