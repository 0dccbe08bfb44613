/**
 * Jobs leave through the outbox. A transaction that creates work writes each job as an outbox row
 * (kind 'job') beside the rows the job concerns; the job is enqueued only after the transaction
 * committed: right away by the request (or worker event) that committed it, and, when the queue
 * refuses it or the process stops first, by the outbox dispatcher, which retries with backoff
 * until the queue takes it. So a worker never runs a job whose asset or version is not visible
 * yet, and a transaction that does not commit publishes nothing. Enqueueing is idempotent by
 * job_id, so a job sent twice (a crash between enqueue and the row's removal) runs once.
 */
import type { Job, JobQueue, Logger } from '@dub/core';
import * as cat from './catalog.js';
import type { Db, Queryable } from './db/db.js';

/** How long the dispatcher leaves a new job row to the request that wrote it before taking it over. */
export const JOB_LEASE_MS = 30_000;

export interface JobOutboxOptions {
  db: Db;
  queue: JobQueue;
  logger: Logger;
  /** A job was left to the dispatcher (wake it). */
  onLeft: () => void;
  /** When the dispatcher tries a job the queue refused. Default 1 s. */
  retryMs?: number;
}

export class JobOutbox {
  /** Jobs written by each open transaction, sent once it committed. */
  private readonly pending = new WeakMap<Queryable, { id: number; job: Job }[]>();

  constructor(private readonly o: JobOutboxOptions) {}

  /** Write `job` in transaction `tx`; `sendCommitted(tx)` enqueues it after the commit. */
  async add(tx: Queryable, job: Job): Promise<void> {
    const now = Date.now();
    const id = await cat.insertOutbox(tx, { kind: 'job', asset_id: job.asset_id, target: job.job_id, subject: job.type, body: JSON.stringify(job) }, now, now + JOB_LEASE_MS);
    const list = this.pending.get(tx) ?? [];
    list.push({ id, job });
    this.pending.set(tx, list);
  }

  /**
   * After `tx` committed: enqueue its jobs and remove their rows. A job the queue refuses stays in
   * the outbox for the dispatcher. Never throws: the transaction has committed.
   */
  async sendCommitted(tx: Queryable): Promise<void> {
    const list = this.pending.get(tx);
    if (!list) return;
    this.pending.delete(tx);
    let left = false;
    for (const { id, job } of list) {
      try {
        await this.o.queue.enqueue(job);
      } catch (e) {
        left = true;
        const err = e instanceof Error ? e.message : String(e);
        this.o.logger.warn({ job_id: job.job_id, asset_id: job.asset_id, err }, 'job not enqueued; the outbox dispatcher retries it');
        await cat.markFailedAttempt(this.o.db, id, err, Date.now() + (this.o.retryMs ?? 1000)).catch(() => undefined);
        continue;
      }
      await cat.deleteOutbox(this.o.db, id).catch((e: unknown) =>
        this.o.logger.warn({ job_id: job.job_id, err: (e as Error).message }, 'enqueued job still in the outbox; the dispatcher sends it again (it runs once)'),
      );
    }
    if (left) this.o.onLeft();
  }
}
