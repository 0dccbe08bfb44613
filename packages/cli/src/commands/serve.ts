/**
 * `dub serve [--port 8080] [--host 127.0.0.1] [--data-dir ./.dub] [--nats URL] [--blobs nats|fs:PATH|s3://BUCKET/PREFIX]
 * [--public-url URL] [--concurrency N]`: the HTTP API. Without --nats it runs the embedded defaults:
 * PGlite in the data dir (or PostgreSQL with DATABASE_URL), FsBlobStore in the data dir and the
 * in-process queue and worker (@dub/pipeline handlers in worker threads). With --nats it only
 * enqueues into NATS JetStream and reads worker events from it; workers run elsewhere
 * (`dub worker`), sharing the blob store (NATS object store by default, a shared fs path, or an
 * S3-compatible bucket: --blobs s3://BUCKET/PREFIX, embedded too).
 * Creating an asset or adding a language whose pair the engines do not serve answers 400 before
 * any work: embedded, the pipeline's PairChecker here; with --nats, the live workers' capabilities.
 * Every environment variable is documented in packages/api/README.md.
 */
import path from 'node:path';
import { ENGINE_FLAGS_HELP, parseCommand, takeEngineFlags, UsageError } from '../cli-args.js';
import { createLogger, exitIfStillRunning, FsBlobStore, loadConfig, settlesWithin, type BlobStore, type EventFeed, type JobQueue } from '@dub/core';
import { apiOptionsFromEnv, createApi, type PairCapability } from '@dub/api';
import type { NatsEventFeed, NatsJobQueue } from '@dub/worker';

export const summary = 'run the HTTP API (embedded queue and worker, or --nats to enqueue into NATS)';

const USAGE = `usage: dub serve [--port 8080] [--host 127.0.0.1] [--data-dir DIR] [--nats URL] [--blobs nats|fs:PATH|s3://BUCKET/PREFIX] [--public-url URL] [--concurrency N] [--warmup] [--drain-timeout MS] [engine flags]

  --warmup             embedded: load and run once the models every job runs when the worker thread
                       starts (HTDemucs, Silero VAD, Whisper, Kokoro), so the first upload pays no model
                       load (also DUB_WARMUP=1; default: they load on first use)
  --drain-timeout MS   on SIGTERM/SIGINT, how long requests and job publishes in progress (and, embedded,
                       running jobs) may take before they are given up (default 30000; jobs not
                       published stay in the outbox; embedded jobs not finished run again at the next start)

engine flags (the embedded worker's; with --nats the workers' own settings apply):
${ENGINE_FLAGS_HELP}`;

export async function run(argv: string[]): Promise<number> {
  const args = parseCommand('serve', USAGE, takeEngineFlags('serve', argv), {
    port: { type: 'string', default: '8080' },
    host: { type: 'string', default: '127.0.0.1' },
    'data-dir': { type: 'string' },
    nats: { type: 'string' },
    blobs: { type: 'string' },
    'public-url': { type: 'string' },
    concurrency: { type: 'string' },
    'drain-timeout': { type: 'string', default: '30000' },
    warmup: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  });
  if (!args) return 0;
  const { values } = args;
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be 0..65535, got "${values.port}"`);
  const drainTimeoutMs = Number(values['drain-timeout']);
  if (!Number.isInteger(drainTimeoutMs) || drainTimeoutMs < 0) throw new UsageError(`--drain-timeout must be an integer >= 0 (milliseconds), got "${values['drain-timeout']}"`);
  const config = loadConfig();
  (await import('@dub/pipeline')).checkOnnxEnv(); // a bad DUB_ONNX_* value: exit 2 now, not a failure of each job
  const dataDir = path.resolve(values['data-dir'] ?? config.dataDir);
  const logger = createLogger({ level: config.logLevel, name: 'dub-api' });
  const natsUrl = values.nats ?? config.natsUrl;
  const worker = await import('@dub/worker');

  let store: BlobStore;
  let queue: JobQueue;
  let events: EventFeed;
  const closers: (() => Promise<void>)[] = [];
  let nats: { queue: NatsJobQueue; feed: NatsEventFeed } | undefined;
  let pairs: PairCapability | undefined;
  if (natsUrl) {
    const servers = worker.parseServers(natsUrl);
    const opened = await worker.openBlobStore(worker.parseBlobsOption(values.blobs ?? 'nats', servers));
    store = opened.store;
    const q = await worker.NatsJobQueue.connect(servers, { logger, store }); // a job too large for a message sends its SRTs as blob keys
    const f = await worker.NatsEventFeed.connect(servers, { logger });
    queue = q;
    events = f;
    nats = { queue: q, feed: f };
    // What the live workers serve (their records in the capabilities bucket): a pair none serves is 400.
    try {
      pairs = await worker.FleetCapabilities.open(q.nc, { bucket: q.topology.names.capabilitiesBucket, connected: () => q.connected });
    } catch (e) {
      logger.warn({ err: (e as Error).message }, 'the workers\' capabilities bucket cannot be opened: pairs are not checked here (the workers check each job on arrival)');
    }
    closers.push(() => f.close(), () => q.close(), () => opened.close());
  } else {
    let closeStore: (() => Promise<void>) | undefined;
    if (values.blobs?.startsWith('s3://')) {
      const opened = await worker.openBlobStore(worker.parseBlobsOption(values.blobs, []));
      store = opened.store;
      closeStore = opened.close;
    } else store = values.blobs?.startsWith('fs:') ? new FsBlobStore(path.resolve(values.blobs.slice(3))) : new FsBlobStore(path.join(dataDir, 'blobs'));
    const rt = worker.createEmbeddedRuntime({
      dataDir,
      store,
      // --warmup (or DUB_WARMUP=1): the embedded worker's threads load and run once the models every
      // job runs (HTDemucs, Silero, Whisper, Kokoro) at start, as `dub worker` does, so the first
      // upload pays no model load; off by default (models load on first use).
      config: { ...config, dataDir, ...(values.warmup ? { warmup: true } : {}) },
      logger,
      ...(values.concurrency ? { concurrency: Number(values.concurrency) } : {}),
      drainTimeoutMs,
    });
    queue = rt.queue;
    events = rt.events;
    closers.push(() => rt.close());
    if (closeStore) closers.push(closeStore);
    // The embedded worker runs the pipeline here: a pair its engines do not serve is 400 before any work.
    const { PairChecker } = await import('@dub/pipeline');
    pairs = new PairChecker({ modelsDir: config.modelsDir, device: config.device });
  }

  const env = apiOptionsFromEnv(process.env, dataDir);
  const api = await createApi({
    ...env,
    ...(values['public-url'] ? { publicUrl: values['public-url'] } : {}),
    ...(config.databaseUrl ? { databaseUrl: config.databaseUrl } : {}),
    store,
    logger,
    transport: { queue, events },
    ...(pairs ? { pairs } : {}),
  });
  const url = await api.listen(port, values.host);
  logger.info({ url, dataDir, database: api.db.kind, mode: natsUrl ? 'nats' : 'embedded', keys: env.keys?.length ?? 0 }, 'dub API listening');
  process.stdout.write(`dub API listening on ${url} (${natsUrl ? `NATS ${natsUrl}` : 'embedded worker'}, ${api.db.kind})\n`);
  if ((env.keys ?? []).length === 0) process.stderr.write('dub serve: warning: DUB_API_KEYS is empty; every authenticated request answers 401\n');

  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  const t0 = Date.now();
  logger.info({ drain_timeout_ms: drainTimeoutMs, ...(nats ? { nats_connected: nats.queue.connected } : {}) }, 'shutting down');
  // Backstop: every step below is bounded; should one still hang, exit rather than wait for a
  // SIGKILL. (Embedded mode: running jobs get the drain timeout too, after the requests; the
  // runtime bounds its own stop.)
  const boundMs = nats ? drainTimeoutMs + STOP_SLACK_MS : 2 * drainTimeoutMs + 2 * STOP_SLACK_MS;
  setTimeout(() => {
    logger.error({ bound_ms: boundMs, resources: process.getActiveResourcesInfo() }, `shutdown did not finish within ${boundMs} ms; exiting with code 1`);
    process.exit(1);
  }, boundMs).unref();
  // NATS unreachable: a job publish would retry for 30 s; give it up now (the job stays in the
  // outbox, durable, and goes out at the next start). Reachable: requests and publishes in
  // progress get the drain timeout.
  if (nats && !nats.queue.connected) nats.queue.stopPublishing();
  const apiClosed = api.close();
  if (!(await settlesWithin(apiClosed, drainTimeoutMs))) {
    logger.warn({ drain_timeout_ms: drainTimeoutMs }, 'drain timeout: giving up job publishes in progress');
    nats?.queue.stopPublishing();
    await settlesWithin(apiClosed, 5000);
  }
  for (const c of closers) await c().catch((e) => logger.error({ err: e }, 'close failed'));
  if (nats) {
    const notEnqueued = nats.queue.notEnqueued;
    const events = nats.feed.notAcknowledged;
    const how = nats.queue.closed?.how ?? 'closed';
    if (notEnqueued.length || events.length || how !== 'drained') {
      const evs = events.map((e) => `${e.type} of ${e.job_id ?? '?'} (stream seq ${e.seq}, ${e.meant})`);
      logger[notEnqueued.length || events.length ? 'warn' : 'info'](
        { jobs_not_enqueued: notEnqueued, events_not_acknowledged: events, nats: how },
        `${how === 'drained' ? '' : `NATS did not confirm the close (${nats.queue.closed?.error ?? how}); `}jobs not enqueued: ${notEnqueued.join(', ') || 'none'}${notEnqueued.length ? ' (kept in the outbox, sent at the next start)' : ''}; worker events not acknowledged: ${evs.join(', ') || 'none'}${events.length ? ' (NATS delivers them again)' : ''}`,
      );
    }
  }
  logger.info({ stop_ms: Date.now() - t0 }, 'stopped');
  // Whatever still holds the event loop now must not keep a stopped server alive.
  exitIfStillRunning(logger, 'still running 3 s after the stop; exiting');
  return 0;
}

/** What the shutdown may take beyond the drain timeout: the event feed's stop, the connections' close. */
const STOP_SLACK_MS = 15_000;
