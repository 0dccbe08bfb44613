/**
 * The NATS worker daemon: pulls jobs from the work-queue stream through one durable pull
 * consumer shared by every worker, runs them in a pool of worker threads, heartbeats
 * (`working()`) while they run, and acks, naks with backoff, or terms them with their failure
 * event. `stop()` stops fetching, drains the jobs in hand (then aborts and naks them), releases
 * every thread's ONNX sessions and closes the connection.
 */
import { jetstream, jetstreamManager, type Consumer, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import { millis, type NatsConnection } from '@nats-io/transport-node';
import { FsBlobStore, JOB_TYPES, settlesWithin, ValidationError, loadConfig, type BlobStore, parseJob, silentLogger, type DubConfig, type EmittedEvent, type Job, type JobType, type Logger, type WorkerEvent } from '@dub/core';
import { completeEvent } from './events.js';
import { failureEvent, toJobError } from './failure.js';
import { DEFAULT_HANDLERS_MODULE, moduleSpecifier } from './handlers-module.js';
import { CapabilityPublisher } from './capabilities.js';
import type { PairCapabilities } from '@dub/pipeline';
import { runAttempt, type Outcome } from './job-runner.js';
import { NamedLimiter } from './limiter.js';
import { startMetricsServer, WorkerMetrics, type MetricsServer } from './metrics.js';
import { closeNats, connectNats, DEFAULT_CLOSE_TIMEOUT_MS, parseServers, type CloseOutcome } from './nats-connection.js';
import { NatsObjectBlobStore } from './nats-object-store.js';
import { NatsEventSink, NatsJobQueue } from './nats-queue.js';
import { ensureStreams, resolveTopology, type ResolvedTopology, type TopologyOptions } from './nats-topology.js';
import { resolveRunnerOptions, retryDelayMs, type ResolvedRunnerOptions, type RunnerOptions } from './options.js';
import { DEFAULT_BLOB_BUCKET, openBlobStore, type BlobStoreSpec } from './store-spec.js';
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
  /** On stop, how long the connection's drain may take before it is closed without it (server unreachable). Default 2 s. */
  closeTimeoutMs?: number;
  /**
   * Publish what this worker serves to the capabilities bucket (capabilities.ts) with a heartbeat
   * (default true): the pipeline's PairChecker.capabilities for @dub/pipeline, else the handlers
   * module's own `capabilities(config)` export, else "unknown".
   */
  publishCapabilities?: boolean;
  /** Heartbeat of the capabilities record (default 10 s). */
  capabilityHeartbeatMs?: number;
}

/** What the handlers module serves: the pipeline's engines here, or the module's own `capabilities(config)`. */
async function capabilitySource(handlersModule: string, config: DubConfig): Promise<PairCapabilities | undefined> {
  if (handlersModule === DEFAULT_HANDLERS_MODULE) {
    const { PairChecker } = await import('@dub/pipeline');
    return new PairChecker({ modelsDir: config.modelsDir, device: config.device }).capabilities();
  }
  const mod = (await import(moduleSpecifier(handlersModule))) as { capabilities?: (c: DubConfig) => Promise<PairCapabilities | undefined> };
  return typeof mod.capabilities === 'function' ? mod.capabilities(config) : undefined;
}

interface InFlight {
  job: Job | undefined;
  msg: JsMsg;
  abort: AbortController;
  done: Promise<void>;
}

/**
 * A job message whose ack, nak or term did not reach the server (it was sent while the
 * connection was down, or never sent because the stop ran out of time): the server delivers it
 * again after its ack wait.
 */
export interface Unacknowledged {
  job_id: string | undefined;
  type: string;
  seq: number;
  /** What the worker meant to tell the server: `ack` (done), `nak` (retry or handed back), `term` (failed), or `none` (still running when the stop gave up). */
  meant: 'ack' | 'nak' | 'term' | 'none';
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
  /** Settlements sent while disconnected since the connection was last up (lost: the client drops what it buffered when it dials again). */
  private unacknowledged: Unacknowledged[] = [];
  /** This worker's record in the capabilities bucket. */
  private capabilities: CapabilityPublisher | undefined;

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
    private readonly closeTimeoutMs: number,
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
    logger.info({ servers, concurrency: options.concurrency, device: config.device, blobs: blobs.kind === 'fs' ? `fs:${blobs.root}` : blobs.kind === 's3' ? `s3://${blobs.bucket}${blobs.prefix ? `/${blobs.prefix}` : ''}` : `nats:${blobs.bucket}`, handlers: handlersModule, limits: options.limits }, 'worker starting');
    const nc = await connectNats(servers, { name: 'dub-worker', logger });
    let pool: ThreadPool | undefined;
    try {
      const jsm = await jetstreamManager(nc);
      if (o.ensure ?? true) await ensureStreams(jsm, topology, { updateWorkerConsumer: true });
      const info = await jsm.consumers.info(topology.names.jobsStream, topology.names.workerConsumer);
      const ackWaitMs = millis(info.config.ack_wait ?? 30_000_000_000);
      const heartbeatMs = Math.max(50, Math.min(o.heartbeatMs ?? Infinity, Math.floor(ackWaitMs / 3)));
      // The main thread's own store: follow-up jobs too large for a message carry their subtitle text there.
      const store: BlobStore = blobs.kind === 'nats' ? await NatsObjectBlobStore.open(nc, blobs.bucket, servers) : blobs.kind === 's3' ? (await openBlobStore(blobs)).store : new FsBlobStore(blobs.root);
      const limiter = new NamedLimiter(options.limits);
      pool = new ThreadPool({ size: options.concurrency, handlersModule, store: blobs, config, logger, limiter, abortGraceMs: options.abortGraceMs });
      await pool.ready();
      const providers = pool.providers();
      logger.info({ providers, device: config.device }, Object.keys(providers).length ? 'models loaded' : 'no model loaded at start (the handlers load them on first use)');
      const consumer = await jetstream(nc).consumers.get(topology.names.jobsStream, topology.names.workerConsumer);
      const sink = new NatsEventSink(nc, topology);
      const queue = await NatsJobQueue.open(nc, { ...topology, ensure: false, store, logger });
      const d = new WorkerDaemon(nc, jsm, consumer, pool, limiter, sink, queue, topology, options, heartbeatMs, o.fetchExpiresMs ?? 2000, o.closeTimeoutMs ?? DEFAULT_CLOSE_TIMEOUT_MS, logger);
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
      if (o.publishCapabilities ?? true) {
        d.capabilities = await CapabilityPublisher.start(nc, { bucket: topology.names.capabilitiesBucket, heartbeatMs: o.capabilityHeartbeatMs, device: config.device, handlers: handlersModule, serves: () => capabilitySource(handlersModule, config), logger });
      }
      d.watchConnection();
      d.fetching = d.fetchLoop();
      logger.info({ stream: topology.names.jobsStream, consumer: topology.names.workerConsumer, ack_wait_ms: ackWaitMs, heartbeat_ms: heartbeatMs }, 'worker ready');
      return d;
    } catch (e) {
      await pool?.close();
      await closeNats(nc, 0);
      throw e;
    }
  }

  private connected = true;

  private watchConnection(): void {
    void (async () => {
      for await (const s of this.nc.status()) {
        if (s.type === 'disconnect') this.connected = false;
        else if (s.type === 'reconnect') {
          this.connected = true;
          if (this.unacknowledged.length) {
            this.logger.warn({ not_acknowledged: this.unacknowledged }, `${this.unacknowledged.length} job message(s) settled while NATS was unreachable; the server delivers them again after ack_wait`);
            this.unacknowledged = [];
          }
        }
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
            this.settle(m, undefined, 'nak');
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
    const entry: InFlight = { job: undefined, msg: m, abort: new AbortController(), done: Promise.resolve() };
    this.inFlight.add(entry);
    entry.done = this.handle(m, entry)
      .catch((e: unknown) => {
        this.logger.error({ err: (e as Error).message, seq: m.seq }, 'job handling failed unexpectedly; naking it');
        this.settle(m, entry.job, 'nak', this.options.backoffBaseMs);
      })
      .finally(() => {
        this.inFlight.delete(entry);
        this.freeSlot();
      });
  }

  /** ack / nak / term a job message, noting it when the server cannot hear it now. */
  private settle(m: JsMsg, job: Job | undefined, meant: 'ack' | 'nak' | 'term', arg?: number | string): void {
    if (meant === 'ack') m.ack();
    else if (meant === 'nak') m.nak(arg as number | undefined);
    else m.term(arg as string | undefined);
    if (!this.connected || this.nc.isClosed()) this.unacknowledged.push({ job_id: job?.job_id, type: job?.type ?? this.typeOf(m), seq: m.info.streamSequence, meant });
  }

  private typeOf(m: JsMsg): string {
    return m.subject.slice(this.topology.names.jobsPrefix.length + 1);
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
        this.settle(m, job, 'ack');
        break;
      case 'retry':
        this.settle(m, job, 'nak', outcome.delayMs);
        break;
      case 'aborted':
        this.settle(m, job, 'nak');
        break;
      case 'failed':
        try {
          await this.publishEvent(completeEvent(job, outcome.event));
        } catch (e) {
          this.logger.error({ job_id: job.job_id, err: (e as Error).message }, 'failure event not published; the job will be delivered again');
          this.settle(m, job, 'nak', retryDelayMs(attempt, this.options));
          this.metrics.jobFinished(job.type, 'retry', seconds, outcome.error.code);
          return;
        }
        await this.terminate(m, `${outcome.error.code}: ${outcome.error.message}`, job);
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
    await this.terminate(m, `${err.code}: ${err.message}`, undefined);
  }

  /**
   * Term the message and delete it from the work queue: servers before 2.11 keep a termed
   * message in a work-queue stream, and a failed job must leave nothing behind.
   */
  private async terminate(m: JsMsg, reason: string, job: Job | undefined): Promise<void> {
    this.settle(m, job, 'term', reason.slice(0, 256));
    if (!this.connected) return; // the delete would wait for a server that is not there; the termed message is delivered again and failed again
    await this.jsm.streams.deleteMessage(this.topology.names.jobsStream, m.info.streamSequence, false).catch(() => undefined);
  }

  /**
   * Graceful stop: no more fetching; jobs in hand get `drainTimeoutMs` to finish, then they are
   * aborted and naked (another worker resumes them from their last finished stage) and event
   * publishes still retrying give up; threads release their ONNX sessions; the connection is
   * drained, or closed when the server does not answer within `closeTimeoutMs` (NATS unreachable:
   * the client's reconnect loop would otherwise keep the process alive). Each step after the
   * drain is bounded, so the whole stop takes at most drainTimeoutMs + abortGraceMs + about 4 s.
   * What the server was not told (acks, naks, terms sent while it was unreachable, jobs still
   * running when the stop gave up) is logged by job id before 'worker stopped'.
   */
  stop(): Promise<void> {
    this.stopped ??= (async () => {
      const t0 = Date.now();
      this.stopping = true;
      this.freeSlot();
      // No longer offered to the fleet (bounded: NATS may be unreachable; its record then expires).
      await this.capabilities?.stop(this.connected ? 1000 : 0);
      this.logger.info({ jobs_in_flight: this.inFlight.size, drain_timeout_ms: this.options.drainTimeoutMs, nats_connected: this.connected }, 'stopping: no more fetching');
      const all = () => Promise.allSettled([...this.inFlight].map((f) => f.done));
      if (!(await settlesWithin(all(), this.options.drainTimeoutMs))) {
        this.logger.warn({ jobs: [...this.inFlight].map((f) => f.job?.job_id) }, 'drain timeout; aborting jobs in hand (they are naked)');
        for (const f of this.inFlight) f.abort.abort('worker shutting down');
        this.sink.close(); // a job waiting on an event publish (NATS unreachable) returns now
        if (!(await settlesWithin(all(), this.options.abortGraceMs + 1000))) {
          for (const f of this.inFlight) this.unacknowledged.push({ job_id: f.job?.job_id, type: f.job?.type ?? this.typeOf(f.msg), seq: f.msg.info.streamSequence, meant: 'none' });
        }
      }
      this.sink.close();
      await settlesWithin(this.fetching, this.fetchExpiresMs + 1000);
      await this.pool.close();
      await settlesWithin(this.metricsServer?.close() ?? Promise.resolve(), 1000);
      const nats = await closeNats(this.nc, this.closeTimeoutMs);
      this.reportUnacknowledged(nats);
      this.logger.info({ stop_ms: Date.now() - t0, nats: nats.how }, 'worker stopped');
    })();
    return this.stopped;
  }

  /** The log line of what the server was not told, when there is any doubt (anything settled while unreachable, or no confirming drain). */
  private reportUnacknowledged(nats: CloseOutcome): void {
    const list = this.unacknowledged;
    if (nats.how === 'drained' && list.length === 0) return;
    const what = list.length ? list.map((u) => `${u.job_id ?? '(invalid job)'} (${u.type}, stream seq ${u.seq}, ${u.meant === 'none' ? 'still running' : u.meant})`).join(', ') : 'none';
    const tail = list.length ? '; the server delivers them again after ack_wait' : '';
    const msg = nats.how === 'drained' ? `job messages not acknowledged: ${what}${tail}` : `NATS did not confirm the close (${nats.error ?? nats.how}); job messages not acknowledged: ${what}${tail}`;
    this.logger[list.length ? 'warn' : 'info']({ not_acknowledged: list, nats: nats.how }, msg);
  }

  /** What the server has not been told so far (see `Unacknowledged`). */
  notAcknowledged(): Unacknowledged[] {
    return [
      ...this.unacknowledged,
      ...[...this.inFlight].map((f) => ({ job_id: f.job?.job_id, type: f.job?.type ?? this.typeOf(f.msg), seq: f.msg.info.streamSequence, meant: 'none' as const })),
    ];
  }
}
