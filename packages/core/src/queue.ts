/**
 * The queue interface any API front enqueues into, and the event feed it reads the worker's
 * status events from. Implementations: NATS JetStream (distributed) and in-process (embedded),
 * both in @dub/worker. No behaviour differs except transport.
 */
import type { Job, WorkerEvent } from './jobs.js';

export interface JobQueue {
  /** Enqueue a job. Idempotent by job_id: publishing the same job_id twice runs it once. */
  enqueue(job: Job): Promise<void>;
  close(): Promise<void>;
}

/** Handles one event; throwing makes the feed deliver it again later. */
export type WorkerEventHandler = (event: WorkerEvent) => Promise<void>;

export interface Subscription {
  stop(): Promise<void>;
}

export interface EventFeed {
  /** Deliver every worker event at least once, in publish order per asset. */
  subscribe(handler: WorkerEventHandler): Promise<Subscription>;
  close(): Promise<void>;
}

/** Where the worker publishes its events. */
export interface EventSink {
  publish(event: WorkerEvent): Promise<void>;
}
