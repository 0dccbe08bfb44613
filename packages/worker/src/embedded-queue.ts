/**
 * The embedded job queue (JobQueue in-process): jobs run on the executor with the same retry and
 * failure semantics as the NATS daemon (`runAttempt`), recorded in the journal before `enqueue()`
 * resolves; a job's file goes once it finished and all its events were delivered (the event feed,
 * embedded-event-feed.ts). The class is also the feed's face (EventFeed, EventSink), so one object
 * is the embedded runtime. Disk faults: see embedded.ts.
 */
import { asStorageError, isDubError, parseJob, ValidationError, type EmittedEvent, type EventFeed, type EventSink, type Job, type JobQueue, type Logger, type Subscription, type WorkerEvent, type WorkerEventHandler } from '@dub/core';
import { EmbeddedEventFeed } from './embedded-event-feed.js';
import { errInfo, FaultBackoff } from './embedded-faults.js';
import { QueueJournal } from './embedded-journal.js';
import { completeEvent } from './events.js';
import type { JobExecutor } from './executor.js';
import { runAttempt, type Outcome } from './job-runner.js';
import type { ResolvedRunnerOptions } from './options.js';

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

export interface InProcessQueueOptions {
  options: ResolvedRunnerOptions;
  logger: Logger;
  dedupWindowMs?: number;
  redeliverBaseMs?: number;
  redeliverMaxMs?: number;
}

export class InProcessQueue implements JobQueue, EventFeed, EventSink {
  private readonly records = new Map<string, JobRecord>();
  private readonly finishedAt = new Map<string, number>();
  private readonly ready: string[] = [];
  private readonly running = new Map<string, Promise<void>>();
  private readonly abort = new AbortController();
  private readonly o: ResolvedRunnerOptions;
  private readonly logger: Logger;
  private readonly dedupWindowMs: number;
  private readonly backoff: FaultBackoff;
  private readonly journal: QueueJournal;
  private readonly feed: EmbeddedEventFeed;
  private closing: Promise<void> | undefined;
  private idleWaiters: (() => void)[] = [];

  constructor(
    dataDir: string,
    private readonly executor: JobExecutor,
    opts: InProcessQueueOptions,
  ) {
    this.o = opts.options;
    this.logger = opts.logger;
    this.dedupWindowMs = opts.dedupWindowMs ?? 3_600_000;
    this.backoff = new FaultBackoff({ base: opts.redeliverBaseMs ?? 100, max: opts.redeliverMaxMs ?? 5000 });
    this.journal = new QueueJournal(dataDir, this.backoff, this.logger, () => this.checkIdle());
    // Reload persisted jobs and undelivered events (synchronously, at construction).
    const { jobs, events } = this.journal.load();
    for (const f of jobs) {
      this.records.set(f.job.job_id, { job: f.job, attempt: f.attempt, finished: f.finished, state: f.finished ? 'finished' : 'queued', pendingEvents: 0 });
      if (!f.finished) this.ready.push(f.job.job_id);
    }
    for (const e of events) {
      const r = this.records.get(e.jobId);
      if (r) r.pendingEvents++;
    }
    this.feed = new EmbeddedEventFeed(this.journal, this.backoff, this.logger, {
      published: (jobId) => {
        const r = this.records.get(jobId);
        if (r) r.pendingEvents++;
      },
      delivered: async (jobId) => {
        const r = this.records.get(jobId);
        if (r) {
          r.pendingEvents--;
          await this.maybeRemove(r);
        }
        this.checkIdle();
      },
    }, events);
    if (this.records.size || events.length) this.logger.info({ jobs: this.ready.length, events: events.length }, 'resuming persisted jobs and events');
    for (const r of this.records.values()) void this.maybeRemove(r);
    this.pump();
  }

  private persist(r: JobRecord): Promise<void> {
    return this.journal.writeJob({ job: r.job, attempt: r.attempt, finished: r.finished });
  }

  /**
   * Queue `r` again after a disk fault (backoff per job). While the queue closes it stays queued
   * and persisted: the next start runs it.
   */
  private requeueLater(r: JobRecord, e: unknown, msg: string): void {
    const delay = this.backoff.next(`job:${r.job.job_id}`);
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
    this.backoff.clear(`job:${job.job_id}`);
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
    this.backoff.clear(`job:${r.job.job_id}`);
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
      await this.journal.removeJob(r.job.job_id);
    } catch (e) {
      r.removing = false;
      const delay = this.backoff.next(`rm:${r.job.job_id}`);
      this.logger.error({ job_id: r.job.job_id, ...errInfo(asStorageError(e, 'queue: removing a finished job')), delay_ms: delay }, 'could not remove a finished job; trying again');
      this.backoff.after(delay, () => void this.maybeRemove(r));
      return;
    }
    this.backoff.clear(`rm:${r.job.job_id}`);
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
    return this.feed.publish(completeEvent(job, e));
  }

  /** EventSink: persist the event, then queue it for the subscriber. */
  publish(event: WorkerEvent): Promise<void> {
    return this.feed.publish(event);
  }

  subscribe(handler: WorkerEventHandler): Promise<Subscription> {
    return this.feed.subscribe(handler);
  }

  /** Jobs known (queued, running, waiting to retry, or finished with events undelivered). */
  get size(): number {
    return this.records.size;
  }

  get inFlight(): number {
    return this.running.size;
  }

  get pendingEvents(): number {
    return this.feed.pending;
  }

  /** Resolves when no job is queued or running and every event was delivered. */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private isIdle(): boolean {
    return this.records.size === 0 && this.running.size === 0 && this.feed.pending === 0 && this.journal.leftoverCount === 0;
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
      this.backoff.cancel();
      const all = Promise.allSettled([...this.running.values()]);
      let timer: NodeJS.Timeout | undefined;
      const drained = await Promise.race([all.then(() => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), this.o.drainTimeoutMs)))]);
      clearTimeout(timer);
      if (!drained) {
        this.logger.warn({ jobs: [...this.running.keys()] }, 'drain timeout; aborting running jobs');
        this.abort.abort('worker shutting down');
        await all;
      }
      await this.feed.close();
      await this.executor.close();
    })();
    return this.closing;
  }
}
