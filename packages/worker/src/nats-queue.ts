/**
 * JobQueue over JetStream: a job is published to `dub.jobs.<type>` with Nats-Msg-Id = job_id,
 * so publishing the same job_id twice (within the stream's duplicate window) stores it once.
 */
import { randomUUID } from 'node:crypto';
import { jetstream, jetstreamManager, type JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { DubError, parseJob, type BlobStore, type EventSink, type Job, type JobQueue, type WorkerEvent, silentLogger } from '@dub/core';
import { linkNew, linkOver, StreamsClient, type StreamsClientOptions, type StreamsLink } from './nats-client.js';
import { DEFAULT_MAX_PAYLOAD_BYTES, fitJob } from './job-text.js';
import { ensureStreams, eventSubjectOf, jobSubjectOf, type ResolvedTopology } from './nats-topology.js';

export interface NatsQueueOptions extends StreamsClientOptions {
  /** How long a publish keeps retrying while NATS is unreachable. Default 30 s. */
  publishTimeoutMs?: number;
  /**
   * Where a job's inline subtitle text goes when the job would not fit the server's message limit
   * (it is then sent as `source_srt_key` / `srt_key`; see job-text.ts). Without a store such a job
   * is refused with a JobTooLargeError.
   */
  store?: BlobStore;
  /** The message limit to fit jobs under; default the server's advertised max_payload (1 MiB when unknown). */
  maxPayloadBytes?: number;
}

/**
 * Publish with retries while the server is unreachable (e.g. restarting); the msgID makes retries
 * safe. Each attempt is bounded by its own timer; `signal` gives up early (shutdown).
 */
export async function publishWithRetry(js: JetStreamClient, subject: string, data: string, msgID: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let delay = 100;
  for (;;) {
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    try {
      if (signal?.aborted) throw new Error('publishing stopped (shutting down)');
      await Promise.race([
        js.publish(subject, data, { msgID, timeout: 5000 }),
        new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('publish timed out')), 6000))),
        // A stop does not wait for an attempt against a server that is not there.
        new Promise<never>((_, reject) => signal?.addEventListener('abort', (onAbort = () => reject(new Error('publishing stopped (shutting down)'))), { once: true })),
      ]);
      return;
    } catch (e) {
      if (signal?.aborted || Date.now() + delay > deadline) throw new DubError('upstream_error', `publish to ${subject} failed: ${(e as Error).message}`, { cause: e, retryable: true, status: 503 });
      await new Promise<void>((r) => {
        const t = setTimeout(r, delay);
        signal?.addEventListener('abort', () => (clearTimeout(t), r()), { once: true });
      });
      delay = Math.min(delay * 2, 2000);
    } finally {
      clearTimeout(timer);
      if (onAbort) signal?.removeEventListener('abort', onAbort);
    }
  }
}

export class NatsJobQueue extends StreamsClient implements JobQueue {
  private readonly js: JetStreamClient;
  private readonly closing = new AbortController();
  private readonly publishTimeoutMs: number;
  /**
   * Jobs whose publish was given up by `stopPublishing()` / `close()` (their sender keeps them: the
   * API's outbox), each once: the request's own publish and the outbox's retry of the same job
   * may both be given up.
   */
  readonly notEnqueued: string[] = [];

  private constructor(link: StreamsLink, private readonly o: NatsQueueOptions) {
    super(link);
    this.js = jetstream(link.nc);
    this.publishTimeoutMs = o.publishTimeoutMs ?? 30_000;
  }

  /** Over an existing connection (not closed by `close()`). */
  static async open(nc: NatsConnection, o: NatsQueueOptions = {}): Promise<NatsJobQueue> {
    return new NatsJobQueue(await linkOver(nc, o), o);
  }

  static async connect(servers: string | string[], o: NatsQueueOptions = {}): Promise<NatsJobQueue> {
    return new NatsJobQueue(await linkNew(servers, 'dub-queue', o), o);
  }

  /** Create/update the streams and consumers (idempotent). */
  async ensureStreams(): Promise<void> {
    await ensureStreams(await jetstreamManager(this.nc), this.topology);
  }

  /** The largest message the server takes: its advertised max_payload (1 MiB, NATS's default, before it said). */
  get maxPayloadBytes(): number {
    return this.o.maxPayloadBytes ?? this.nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD_BYTES;
  }

  /**
   * Publish a job (deduplicated by job_id). A job that would not fit the server's message limit
   * has its inline subtitle text moved to the blob store first; one that cannot be made to fit
   * is refused with a JobTooLargeError (code payload_too_large, not retryable) before anything is
   * sent, so the connection is never cut by the server.
   */
  async enqueue(job: Job): Promise<void> {
    const j = parseJob(job);
    const fitted = await fitJob(j, this.maxPayloadBytes, this.o.store);
    if (fitted.moved.length) (this.o.logger ?? silentLogger).info({ job_id: j.job_id, bytes_inline: Buffer.byteLength(JSON.stringify(j)), bytes: Buffer.byteLength(fitted.data), max_payload: this.maxPayloadBytes, keys: fitted.moved }, 'job over the message limit with its subtitle text inline: sent with blob keys');
    try {
      await publishWithRetry(this.js, jobSubjectOf(this.topology.names, j.type), fitted.data, j.job_id, this.publishTimeoutMs, this.closing.signal);
    } catch (e) {
      if (this.closing.signal.aborted && !this.notEnqueued.includes(j.job_id)) this.notEnqueued.push(j.job_id);
      throw e;
    }
  }

  /** Give up publishes in progress and refuse new ones (shutdown): each `enqueue` rejects at once with a retryable error. */
  stopPublishing(): void {
    this.closing.abort();
  }

  /** Stop publishing, then drain the connection when this queue opened it (closed without the drain after 2 s: NATS unreachable). */
  async close(): Promise<void> {
    this.stopPublishing();
    await this.closeConnection();
  }
}

/** EventSink over JetStream: events go to `dub.events.<asset_id>` on the events stream. */
export class NatsEventSink implements EventSink {
  private readonly js: JetStreamClient;
  private readonly closing = new AbortController();
  constructor(nc: NatsConnection, private readonly topology: ResolvedTopology, private readonly publishTimeoutMs = 60_000) {
    this.js = jetstream(nc);
  }

  async publish(event: WorkerEvent): Promise<void> {
    await publishWithRetry(this.js, eventSubjectOf(this.topology.names, event.asset_id), JSON.stringify(event), randomUUID(), this.publishTimeoutMs, this.closing.signal);
  }

  /** Stop retrying publishes still in progress. */
  close(): void {
    this.closing.abort();
  }
}
