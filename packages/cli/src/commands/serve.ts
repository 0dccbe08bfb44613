/**
 * `dub serve [--port 8080] [--host 127.0.0.1] [--data-dir ./.dub] [--nats URL] [--blobs nats|fs:PATH]
 * [--public-url URL] [--concurrency N]`: the HTTP API. Without --nats it runs the embedded defaults:
 * PGlite in the data dir (or PostgreSQL with DATABASE_URL), FsBlobStore in the data dir and the
 * in-process queue and worker (@dub/pipeline handlers in worker threads). With --nats it only
 * enqueues into NATS JetStream and reads worker events from it; workers run elsewhere
 * (`dub worker`), sharing the blob store (NATS object store by default, or a shared fs path).
 * Every environment variable is documented in packages/api/README.md.
 */
import path from 'node:path';
import { ENGINE_FLAGS_HELP, parseCommand, takeEngineFlags, UsageError } from '../cli-args.js';
import { createLogger, FsBlobStore, loadConfig, type BlobStore, type EventFeed, type JobQueue } from '@dub/core';
import { apiOptionsFromEnv, createApi } from '@dub/api';

export const summary = 'run the HTTP API (embedded queue and worker, or --nats to enqueue into NATS)';

const USAGE = `usage: dub serve [--port 8080] [--host 127.0.0.1] [--data-dir DIR] [--nats URL] [--blobs nats|fs:PATH] [--public-url URL] [--concurrency N] [engine flags]

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
    help: { type: 'boolean', short: 'h' },
  });
  if (!args) return 0;
  const { values } = args;
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be 0..65535, got "${values.port}"`);
  const config = loadConfig();
  const dataDir = path.resolve(values['data-dir'] ?? config.dataDir);
  const logger = createLogger({ level: config.logLevel, name: 'dub-api' });
  const natsUrl = values.nats ?? config.natsUrl;
  const worker = await import('@dub/worker');

  let store: BlobStore;
  let queue: JobQueue;
  let events: EventFeed;
  const closers: (() => Promise<void>)[] = [];
  if (natsUrl) {
    const servers = worker.parseServers(natsUrl);
    const opened = await worker.openBlobStore(worker.parseBlobsOption(values.blobs ?? 'nats', servers));
    store = opened.store;
    const q = await worker.NatsJobQueue.connect(servers, { logger });
    const f = await worker.NatsEventFeed.connect(servers, { logger });
    queue = q;
    events = f;
    closers.push(() => f.close(), () => q.close(), () => opened.close());
  } else {
    store = values.blobs?.startsWith('fs:') ? new FsBlobStore(path.resolve(values.blobs.slice(3))) : new FsBlobStore(path.join(dataDir, 'blobs'));
    const rt = worker.createEmbeddedRuntime({
      dataDir,
      store,
      config: { ...config, dataDir },
      logger,
      ...(values.concurrency ? { concurrency: Number(values.concurrency) } : {}),
    });
    queue = rt.queue;
    events = rt.events;
    closers.push(() => rt.close());
  }

  const env = apiOptionsFromEnv(process.env, dataDir);
  const api = await createApi({
    ...env,
    ...(values['public-url'] ? { publicUrl: values['public-url'] } : {}),
    ...(config.databaseUrl ? { databaseUrl: config.databaseUrl } : {}),
    store,
    logger,
    transport: { queue, events },
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
  logger.info('shutting down');
  await api.close();
  for (const c of closers) await c().catch((e) => logger.error({ err: e }, 'close failed'));
  return 0;
}
