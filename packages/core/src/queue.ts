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

import type { BlobStore } from './blob.js';
import type { StageContext } from './context.js';
import type { DubConfig } from './config.js';
import type { GenerateVersionJob, PrepareAssetJob, PrepareVersionJob } from './jobs.js';

/** Distributive Omit over the event union. */
type DistOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** An event as a handler emits it: the runtime fills v, job_id, asset_id and at. */
export type EmittedEvent = DistOmit<WorkerEvent, 'v' | 'job_id' | 'asset_id' | 'at'>;

/** What a job handler gets from the worker (NATS daemon or in-process runner alike). */
/**
 * ONNX sessions of a worker thread as the runtime holds them (@dub/onnx's SessionCache is one):
 * the provider each model file got, and release on shutdown.
 */
export interface SessionStore {
  readonly providers: ReadonlyMap<string, 'cpu' | 'cuda'>;
  /** How a model file runs other than as shipped, where that changes its numbers (one line each), for its engine record. */
  readonly runAs?: ReadonlyMap<string, readonly string[]>;
  readonly size: number;
  release(file: string): Promise<void>;
  disposeAll(): Promise<void>;
}

export interface JobRuntime {
  store: BlobStore;
  /** logger, AbortSignal (fires on shutdown or cancel), onProgress (published as progress events). */
  ctx: StageContext;
  config: DubConfig;
  /** ONNX sessions of this worker thread; released on shutdown. */
  sessions: SessionStore;
  /** Publish a status event for this job's asset. */
  emit(event: EmittedEvent): Promise<void>;
  /** Enqueue a follow-up job (e.g. prepare-version after prepare-asset). */
  enqueue(job: Job): Promise<void>;
  /** 1-based delivery attempt of this job. */
  attempt: number;
  /**
   * Run `fn` holding a slot of the named per-stage limit of this worker process (e.g. 'gpu': one
   * GPU-heavy stage at a time per device; names without a configured limit are unlimited).
   * Optional: runtimes without limits (tests, other tools) may leave it out; call it as
   * `rt.withLimit ? rt.withLimit('gpu', fn) : fn()`.
   */
  withLimit?<T>(name: string, fn: () => Promise<T>): Promise<T>;
}

export type JobHandler<J extends Job> = (job: J, rt: JobRuntime) => Promise<void>;

/**
 * Handlers per job type. A handler emits its success events itself; on a thrown DubError the
 * worker retries (retryable) or publishes the failure event with the error's code (permanent,
 * or retries exhausted).
 */
export interface JobHandlers {
  'prepare-asset': JobHandler<PrepareAssetJob>;
  'prepare-version': JobHandler<PrepareVersionJob>;
  'generate-version': JobHandler<GenerateVersionJob>;
}
