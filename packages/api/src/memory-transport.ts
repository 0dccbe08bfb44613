/**
 * An in-memory JobQueue + EventFeed: it records enqueued jobs and lets the caller publish worker
 * events to the subscribers. For tests of API fronts and for embedding without a worker.
 */
import { parseJob, parseWorkerEvent, type EventFeed, type Job, type JobQueue, type Subscription, type WorkerEvent, type WorkerEventHandler } from '@dub/core';

export class MemoryTransport implements JobQueue, EventFeed {
  readonly jobs: Job[] = [];
  private readonly ids = new Set<string>();
  private readonly handlers = new Set<WorkerEventHandler>();
  /** Fails the next enqueue calls with this error (tests of rollback). */
  failNextEnqueue: Error | undefined;

  async enqueue(job: Job): Promise<void> {
    if (this.failNextEnqueue) {
      const e = this.failNextEnqueue;
      this.failNextEnqueue = undefined;
      throw e;
    }
    parseJob(job);
    if (this.ids.has(job.job_id)) return;
    this.ids.add(job.job_id);
    this.jobs.push(job);
  }

  async subscribe(handler: WorkerEventHandler): Promise<Subscription> {
    this.handlers.add(handler);
    return { stop: async () => void this.handlers.delete(handler) };
  }

  /** Publish an event (v/at filled when absent) and wait until every subscriber handled it. */
  async publish(event: Omit<WorkerEvent, 'v' | 'at'> & { v?: 1; at?: string }): Promise<void> {
    const ev = parseWorkerEvent({ v: 1, at: new Date().toISOString(), ...event });
    for (const h of this.handlers) await h(ev);
  }

  jobsOf<T extends Job['type']>(type: T): Extract<Job, { type: T }>[] {
    return this.jobs.filter((j): j is Extract<Job, { type: T }> => j.type === type);
  }

  async close(): Promise<void> {
    this.handlers.clear();
  }
}
