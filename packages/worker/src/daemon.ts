/**
 * The NATS worker daemon: pulls jobs from the work-queue stream through one durable pull
 * consumer shared by every worker, runs them in a pool of worker threads, heartbeats
 * (`working()`) while they run, and acks, naks with backoff, or terms them with their failure
 * event. `stop()` stops fetching, drains the jobs in hand (then aborts and naks them), releases
 * every thread's ONNX sessions and closes the connection.
 */
import { jetstream, jetstreamManager, type Consumer, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import { millis, type NatsConnection } from '@nats-io/transport-node';
import { JOB_TYPES, ValidationError, loadConfig, parseJob, silentLogger, type DubConfig, type EmittedEvent, type Job, type JobType, type Logger, type WorkerEvent } from '@dub/core';
import { completeEvent } from './events.js';
import { failureEvent, toJobError } from './failure.js';
import { DEFAULT_HANDLERS_MODULE } from './handlers-module.js';
import { runAttempt, type Outcome } from './job-runner.js';
import { NamedLimiter } from './limiter.js';
import { startMetricsServer, WorkerMetrics, type MetricsServer } from './metrics.js';
import { connectNats, parseServers } from './nats-connection.js';
import { NatsObjectBlobStore } from './nats-object-store.js';
import { NatsEventSink, NatsJobQueue } from './nats-queue.js';
import { ensureStreams, resolveTopology, type ResolvedTopology, type TopologyOptions } from './nats-topology.js';
import { resolveRunnerOptions, retryDelayMs, type ResolvedRunnerOptions, type RunnerOptions } from './options.js';
import { DEFAULT_BLOB_BUCKET, type BlobStoreSpec } from './store-spec.js';
import { ThreadPool } from './thread-pool.js';

export interface WorkerDaemonOptions extends RunnerOptions, TopologyOptions {
  /** NATS server URL(s), e.g. nats://127.0.0.1:4222 (comma-separated or an array). */
  servers: string | string[];
  /** Blob store: NATS object store bucket (default `dub-blobs`) or a shared filesystem path. */
  blobs?: BlobStoreSpec;
  /** Module exporting `jobHandlers` (default '@dub/pipeline'), imported by each job thread. */
  handlersModule?: string;
  config?: DubConfig;
  logger?: Logger;
  /** Serve /healthz and /metrics on this port (0 = a free port; undefined = no server). */
  metricsPort?: number;
  metricsHost?: string;
  /** Create/update streams and consumers at start. Default true. */
  ensure?: boolean;
  /** How long one pull request waits for jobs. Default 2 s (also the longest a stop waits for it). */
  fetchExpiresMs?: number;
  /** Heartbeat interval; default a third of the consumer's ack wait. */
  heartbeatMs?: number;
}

interface InFlight {
  job: Job | undefined;
  abort: AbortController;
  done: Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class WorkerDaemon {
  readonly metrics = new WorkerMetrics();
  private readonly inFlight = new Set<InFlight>();
  private slotWaiters: (() => void)[] = [];
  private stopping = false;
  private stopped: Promise<void> | undefined;
  private fetching: Promise<void> = Promise.resolve();
  private metricsServer: MetricsServer | undefined;
  private queueInfo: { at: number; value: Promise<{ pending: number; ackPending: number } | undefined> } | undefined;

  private constructor(
    readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
    private readonly consumer: Consumer,
    private readonly pool: ThreadPool,
    private readonly limiter: NamedLimiter,
    private readonly sink: NatsEventSink,
    private readonly queue: NatsJobQueue,
    readonly topology: ResolvedTopology,
    readonly options: ResolvedRunnerOptions,
    private readonly heartbeatMs: number,
    private readonly fetchExpiresMs: number,
    private readonly logger: Logger,
  ) {}

  static async start(o: WorkerDaemonOptions): Promise<WorkerDaemon> {
    const logger = o.logger ?? silentLogger;
    const options = resolveRunnerOptions(o);
    const config = o.config ?? loadConfig();
    const servers = parseServers(o.servers);
    const blobs: BlobStoreSpec = o.blobs ?? { kind: 'nats', servers, bucket: DEFAULT_BLOB_BUCKET };
    const handlersModule = o.handlersModule ?? DEFAULT_HANDLERS_MODULE;
    const topology = resolveTopology(o);
    logger.info({ servers, concurrency: options.concurrency, device: config.device, blobs: blobs.kind === 'fs' ? `fs:${blobs.root}` : `nats:${blobs.bucket}`, handlers: handlersModule, limits: options.limits }, 'worker starting');
    const nc = await connectNats(servers, { name: 'dub-worker', logger });
    let pool: ThreadPool | undefined;
    try {
      const jsm = await jetstreamManager(nc);
      if (o.ensure ?? true) await ensureStreams(jsm, topology, { updateWorkerConsumer: true });
      const info = await jsm.consumers.info(topology.names.jobsStream, topology.names.workerConsumer);
      const ackWaitMs = millis(info.config.ack_wait ?? 30_000_000_000);
      const heartbeatMs = Math.max(50, Math.min(o.heartbeatMs ?? Infinity, Math.floor(ackWaitMs / 3)));
      if (blobs.kind === 'nats') await NatsObjectBlobStore.open(nc, blobs.bucket, servers);
      const limiter = new NamedLimiter(options.limits);
      pool = new ThreadPool({ size: options.concurrency, handlersModule, store: blobs, config, logger, limiter, abortGraceMs: options.abortGraceMs });
      await pool.ready();
      const providers = pool.providers();
      logger.info({ providers, device: config.device }, Object.keys(providers).length ? 'models loaded' : 'no model loaded at start (the handlers load them on first use)');
      const consumer = await jetstream(nc).consumers.get(topology.names.jobsStream, topology.names.workerConsumer);
      const sink = new NatsEventSink(nc, topology);
      const queue = await NatsJobQueue.open(nc, { ...topology, ensure: false });
      const d = new WorkerDaemon(nc, jsm, consumer, pool, limiter, sink, queue, topology, options, heartbeatMs, o.fetchExpiresMs ?? 2000, logger);
      if (o.metricsPort !== undefined) {
        d.metricsServer = await startMetricsServer(o.metricsPort, o.metricsHost ?? '0.0.0.0', d.metrics, {
          jobsInFlight: () => d.inFlight.size,
          concurrency: () => options.concurrency,
          connected: () => !nc.isClosed() && d.connected,
          healthy: () => !d.stopping && !nc.isClosed() && d.connected,
          queue: () => d.queueLag(),
          limits: () => limiter.snapshot(),
        });
        logger.info({ port: d.metricsServer.port }, 'metrics and health on /metrics and /healthz');
      }
      d.watchConnection();
      d.fetching = d.fetchLoop();
      logger.info({ stream: topology.names.jobsStream, consumer: topology.names.workerConsumer, ack_wait_ms: ackWaitMs, heartbeat_ms: heartbeatMs }, 'worker ready');
      return d;
    } catch (e) {
      await pool?.close();
      await nc.close();
      throw e;
    }
  }

  private connected = true;

  private watchConnection(): void {
    void (async () => {
      for await (const s of this.nc.status()) {
        if (s.type === 'disconnect') this.connected = false;
        else if (s.type === 'reconnect') this.connected = true;
      }
    })().catch(() => undefined);
  }

  /** Port of the metrics server, when one was started. */
  get metricsPort(): number | undefined {
    return this.metricsServer?.port;
  }

  get jobsInFlight(): number {
    return this.inFlight.size;
  }

  private queueLag(): Promise<{ pending: number; ackPending: number } | undefined> {
    const now = Date.now();
    if (!this.queueInfo || now - this.queueInfo.at > 1000) {
      this.queueInfo = {
        at: now,
        value: this.jsm.consumers.info(this.topology.names.jobsStream, this.topology.names.workerConsumer).then(
          (i) => ({ pending: i.num_pending, ackPending: i.num_ack_pending }),
          () => undefined,
        ),
      };
    }
    return this.queueInfo.value;
  }

  private waitForSlot(): Promise<void> {
    if (this.inFlight.size < this.options.concurrency || this.stopping) return Promise.resolve();
    return new Promise((r) => this.slotWaiters.push(r));
  }

  private freeSlot(): void {
    const w = this.slotWaiters;
    this.slotWaiters = [];
    for (const f of w) f();
  }

  private async fetchLoop(): Promise<void> {
    while (!this.stopping) {
      await this.waitForSlot();
      if (this.stopping) break;
      const free = this.options.concurrency - this.inFlight.size;
      try {
        const iter = await this.consumer.fetch({ max_messages: free, expires: this.fetchExpiresMs });
        for await (const m of iter) {
          if (this.stopping) {
            m.nak();
            continue;
          }
          this.accept(m);
        }
      } catch (e) {
        if (this.stopping) break;
        this.logger.warn({ err: (e as Error).message }, 'job fetch failed; retrying');
        await sleep(500);
      }
    }
  }

  private accept(m: JsMsg): void {
    const entry: InFlight = { job: undefined, abort: new AbortController(), done: Promise.resolve() };
    this.inFlight.add(entry);
    entry.done = this.handle(m, entry)
      .catch((e: unknown) => {
        this.logger.error({ err: (e as Error).message, seq: m.seq }, 'job handling failed unexpectedly; naking it');
        m.nak(this.options.backoffBaseMs);
      })
      .finally(() => {
        this.inFlight.delete(entry);
        this.freeSlot();
      });
  }

  private publishEvent(e: WorkerEvent): Promise<void> {
    this.metrics.observeEvent(e);
    return this.sink.publish(e);
  }

  private async handle(m: JsMsg, entry: InFlight): Promise<void> {
    const t0 = performance.now();
    let job: Job;
    try {
      let raw: unknown;
      try {
        raw = JSON.parse(m.string());
      } catch (e) {
        throw new ValidationError(`invalid job: not JSON (${(e as Error).message})`, { cause: e });
      }
      job = parseJob(raw);
    } catch (e) {
      await this.reject(m, e);
      return;
    }
    entry.job = job;
    const attempt = m.info.deliveryCount;
    const hb = setInterval(() => m.working(), this.heartbeatMs);
    let outcome: Outcome;
    try {
      outcome = await runAttempt(job, attempt, {
        executor: this.pool,
        options: this.options,
        logger: this.logger,
        signal: entry.abort.signal,
        emit: (e: EmittedEvent) => this.publishEvent(completeEvent(job, e)),
        enqueue: (j: Job) => this.queue.enqueue(j),
      });
    } finally {
      clearInterval(hb);
    }
    const seconds = (performance.now() - t0) / 1000;
    switch (outcome.kind) {
      case 'done':
        m.ack();
        break;
      case 'retry':
        m.nak(outcome.delayMs);
        break;
      case 'aborted':
        m.nak();
        break;
      case 'failed':
        try {
          await this.publishEvent(completeEvent(job, outcome.event));
        } catch (e) {
          this.logger.error({ job_id: job.job_id, err: (e as Error).message }, 'failure event not published; the job will be delivered again');
          m.nak(retryDelayMs(attempt, this.options));
          this.metrics.jobFinished(job.type, 'retry', seconds, outcome.error.code);
          return;
        }
        await this.terminate(m, `${outcome.error.code}: ${outcome.error.message}`);
        break;
    }
    this.metrics.jobFinished(job.type, outcome.kind, seconds, 'error' in outcome ? outcome.error.code : undefined);
  }

  /** A message that is not a valid job: term it (nothing left in the stream), log and count it with its code. */
  private async reject(m: JsMsg, e: unknown): Promise<void> {
    const err = toJobError(e);
    const typePart = m.subject.slice(this.topology.names.jobsPrefix.length + 1);
    const type = (JOB_TYPES as readonly string[]).includes(typePart) ? (typePart as JobType) : 'unknown';
    this.logger.error({ subject: m.subject, seq: m.seq, code: err.code, err: err.message, data: m.string().slice(0, 200) }, 'invalid job message; terminated');
    this.metrics.jobFinished(type, 'invalid', 0, err.code);
    // Tell the API when the message names its job well enough for a failure event.
    try {
      const raw = JSON.parse(m.string()) as Record<string, unknown>;
      if (typeof raw.job_id === 'string' && typeof raw.asset_id === 'string' && (JOB_TYPES as readonly string[]).includes(String(raw.type))) {
        const ev = completeEvent(raw as unknown as Job, failureEvent(raw as unknown as Job, { ...err, code: raw.type === 'prepare-asset' ? 'invalid_input' : err.code }));
        await this.publishEvent(ev);
      }
    } catch {
      /* not enough to name the job: the log line and the metric are the record */
    }
    await this.terminate(m, `${err.code}: ${err.message}`);
  }

  /**
   * Term the message and delete it from the work queue: servers before 2.11 keep a termed
   * message in a work-queue stream, and a failed job must leave nothing behind.
   */
  private async terminate(m: JsMsg, reason: string): Promise<void> {
    m.term(reason.slice(0, 256));
    await this.jsm.streams.deleteMessage(this.topology.names.jobsStream, m.info.streamSequence, false).catch(() => undefined);
  }

  /**
   * Graceful stop: no more fetching; jobs in hand get `drainTimeoutMs` to finish, then they are
   * aborted and naked (another worker resumes them from their last finished stage); threads
   * release their ONNX sessions; the connection is drained.
   */
  stop(): Promise<void> {
    this.stopped ??= (async () => {
      this.stopping = true;
      this.freeSlot();
      this.logger.info({ jobs_in_flight: this.inFlight.size, drain_timeout_ms: this.options.drainTimeoutMs }, 'stopping: no more fetching');
      const all = () => Promise.allSettled([...this.inFlight].map((f) => f.done));
      let timer: NodeJS.Timeout | undefined;
      const drained = await Promise.race([all().then(() => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), this.options.drainTimeoutMs)))]);
      clearTimeout(timer);
      if (!drained) {
        this.logger.warn({ jobs: [...this.inFlight].map((f) => f.job?.job_id) }, 'drain timeout; aborting jobs in hand (they are naked)');
        for (const f of this.inFlight) f.abort.abort('worker shutting down');
        await all();
      }
      await this.fetching;
      await this.pool.close();
      await this.metricsServer?.close();
      this.sink.close();
      await this.nc.drain().catch(() => undefined);
      this.logger.info('worker stopped');
    })();
    return this.stopped;
  }
}
