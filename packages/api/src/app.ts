/**
 * Wiring: database (PGlite in the data dir, or PostgreSQL with databaseUrl), blob store
 * (FsBlobStore in the data dir unless given), keys, the service, the outbox dispatcher, the worker
 * event subscription and the fastify server.
 */
import path from 'node:path';
import { createLogger, failureEvent, FsBlobStore, silentLogger, type WorkerEvent, type BlobStore, type EventFeed, type JobQueue, type Logger, type Subscription } from '@dub/core';
import type { FastifyInstance } from 'fastify';
import { KeyRing, RateLimiter } from './auth.js';
import * as cat from './catalog.js';
import type { Db } from './db/db.js';
import { migrate } from './db/migrations.js';
import { openPgliteDb } from './db/pglite-db.js';
import { openPostgresDb } from './db/postgres-db.js';
import { OutboxDispatcher } from './dispatcher.js';
import { EventRetry, NotVisibleError } from './event-retry.js';
import { loadOrCreateCallbackKey, loadOrCreateUrlSecret, publicKeyPem } from './keys.js';
import { createSmtpMailer, type Mailer } from './mailer.js';
import { Metrics } from './metrics.js';
import { resolveApiOptions, type ApiOptions, type ResolvedApiOptions } from './options.js';
import { buildServer } from './server.js';
import { DubService } from './service.js';
import { UrlSigner } from './signing.js';
import type { PairCapability } from './validation.js';
import { VoiceCatalog } from './voices.js';

export interface CreateApiOptions extends ApiOptions {
  /** The queue jobs are enqueued into and the feed of worker events. */
  transport: { queue: JobQueue; events: EventFeed };
  /** PostgreSQL URL; absent: PGlite in <dataDir>/db. */
  databaseUrl?: string;
  /** PostgreSQL schema (tests use one per run). */
  databaseSchema?: string;
  /** An open database (overrides databaseUrl). */
  db?: Db;
  /** Blob store; default FsBlobStore in <dataDir>/blobs. */
  store?: BlobStore;
  logger?: Logger;
  /**
   * Cache asset views in memory for GET asset. Default: on with PGlite (one process owns it), off
   * with PostgreSQL (several API instances may write); turn on only when one instance runs.
   */
  assetCache?: boolean;
  /**
   * Whether the engines that run the work serve a language pair: creating an asset or adding a
   * language they do not serve answers 400 before anything is created (validation.ts
   * PairCapability). `dub serve` passes the pipeline's PairChecker (embedded worker) or the live
   * NATS workers' capabilities. Absent: not checked (the worker refuses such a job on arrival).
   */
  pairs?: PairCapability;
  /** Start the outbox dispatcher (default true). */
  dispatch?: boolean;
}

export interface DubApi {
  app: FastifyInstance;
  service: DubService;
  db: Db;
  store: BlobStore;
  options: ResolvedApiOptions;
  dispatcher: OutboxDispatcher;
  publicKeyPem: string;
  /** Listen on host:port; returns the base URL. */
  listen(port: number, host?: string): Promise<string>;
  close(): Promise<void>;
}

export async function openDb(o: { dataDir: string; databaseUrl?: string; databaseSchema?: string }): Promise<Db> {
  if (o.databaseUrl) return openPostgresDb({ connectionString: o.databaseUrl, ...(o.databaseSchema ? { schema: o.databaseSchema } : {}) });
  return openPgliteDb(path.join(path.resolve(o.dataDir), 'db'));
}

export async function createApi(opts: CreateApiOptions): Promise<DubApi> {
  const options = resolveApiOptions(opts);
  const logger = opts.logger ?? silentLogger;
  const db = opts.db ?? (await openDb({ dataDir: options.dataDir, ...(opts.databaseUrl ? { databaseUrl: opts.databaseUrl } : {}), ...(opts.databaseSchema ? { databaseSchema: opts.databaseSchema } : {}) }));
  await migrate(db);
  const store = opts.store ?? new FsBlobStore(path.join(options.dataDir, 'blobs'));
  const key = loadOrCreateCallbackKey(options.callbackKeyFile);
  const pem = publicKeyPem(key);
  const signer = new UrlSigner(loadOrCreateUrlSecret(options.dataDir, options.urlSecret));
  const metrics = new Metrics();
  const mailer: Mailer | undefined = options.smtpUrl ? createSmtpMailer(options.smtpUrl, options.smtpFrom) : undefined;
  const dispatcher = new OutboxDispatcher({
    db,
    key,
    logger,
    ...(mailer ? { mailer } : {}),
    queue: opts.transport.queue,
    allowPrivateUrls: options.allowPrivateUrls,
    maxAttempts: options.callbackMaxAttempts,
    backoffMs: options.callbackBackoffMs,
    timeoutMs: options.callbackTimeoutMs,
    pollMs: options.outboxPollMs,
    onResult: (kind, ok) => metrics.inc('dub_outbox_deliveries_total', 'Callback and e-mail delivery attempts.', { kind, result: ok ? 'ok' : 'error' }),
    // a job the queue refuses for good fails its asset or version, as the worker would
    onJobRefused: (job, err) => service.applyWorkerEvent({ ...failureEvent(job, err), v: 1, job_id: job.job_id, asset_id: job.asset_id, at: new Date().toISOString() } as WorkerEvent),
  });
  const service = new DubService({ db, store, queue: opts.transport.queue, options, signer, logger, onOutbox: () => dispatcher.kick(), assetCache: opts.assetCache ?? db.kind === 'pglite' });
  const voices = VoiceCatalog.load();
  const app = await buildServer({
    service,
    store,
    db,
    keys: new KeyRing(options.keys),
    limiter: new RateLimiter(options.rateLimitPerMin),
    metrics,
    voices,
    options,
    publicKeyPem: pem,
    logger,
    ...(opts.pairs ? { pairs: opts.pairs } : {}),
    gauges: async () => {
      const c = await cat.outboxCounts(db);
      return [
        { name: 'dub_outbox_pending', help: 'Deliveries waiting in the outbox.', value: c.pending },
        { name: 'dub_outbox_given_up', help: 'Deliveries given up after the last attempt.', value: c.given_up },
      ];
    },
  });
  const retry = new EventRetry({ windowMs: options.eventRetryMs, logger });
  const sub: Subscription = await opts.transport.events.subscribe(async (ev) => {
    metrics.inc('dub_worker_events_total', 'Worker events received.', { type: ev.type });
    try {
      await retry.apply(ev, (e) => service.applyWorkerEvent(e));
    } catch (e) {
      if (e instanceof NotVisibleError) throw e;
      logger.error({ err: e, event: ev.type, asset_id: ev.asset_id }, 'worker event failed; it will be delivered again');
      throw e;
    }
  });
  if (opts.dispatch !== false) dispatcher.start();
  let closed = false;
  return {
    app,
    service,
    db,
    store,
    options,
    dispatcher,
    publicKeyPem: pem,
    async listen(port, host = '127.0.0.1') {
      await app.listen({ port, host });
      const addr = app.server.address();
      const p = typeof addr === 'object' && addr ? addr.port : port;
      return `http://${host.includes(':') ? `[${host}]` : host}:${p}`;
    },
    async close() {
      if (closed) return;
      closed = true;
      await sub.stop();
      await dispatcher.stop();
      await app.close();
      mailer?.close();
      if (!opts.db) await db.close();
    },
  };
}

export { createLogger };
