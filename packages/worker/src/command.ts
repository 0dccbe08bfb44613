/**
 * `dub worker --nats nats://HOST:4222 [--concurrency N] [--device cpu|cuda|cuda:N]
 *   [--data-dir DIR] [--blobs nats|nats:BUCKET|fs:PATH|s3://BUCKET/PREFIX] [--handlers MODULE] [--metrics-port P]
 *   [--limit NAME=N]... [--ack-wait MS] [--drain-timeout MS] [--max-deliver N]`
 * Runs the NATS worker daemon until SIGTERM/SIGINT, then drains and exits 0, NATS reachable or
 * not: within --drain-timeout + 5 s abort grace + a few seconds of closing (see WorkerDaemon.stop).
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createLogger, exitIfStillRunning, isDubError, loadConfig, parseDevice, ValidationError } from '@dub/core';
import { checkOnnxEnv } from '@dub/onnx';
import { WorkerDaemon } from './daemon.js';
import { parseServers } from './nats-connection.js';
import { parseBlobsOption } from './store-spec.js';

export const WORKER_USAGE = `usage: dub worker --nats nats://HOST:4222 [options]
  --nats URL[,URL]        NATS server(s) (default: DUB_NATS_URL)
  --concurrency N         jobs at once, one worker thread each (default 1)
  --device D              cpu, cuda or cuda:N for ONNX models (default: DUB_DEVICE or cpu)
  --data-dir DIR          data directory (default: DUB_DATA_DIR or .dub); --blobs fs defaults under it
  --blobs B               nats (object store bucket dub-blobs), nats:BUCKET, fs:PATH (shared path) or
                          s3://BUCKET/PREFIX (S3-compatible; endpoint, region, credentials from the AWS env)
  --handlers MODULE       module exporting jobHandlers (default @dub/pipeline)
  --metrics-port P        serve /healthz and /metrics on port P
  --limit NAME=N          per-stage limit used through rt.withLimit (default gpu=1), repeatable
  --ack-wait MS           ack wait of the worker consumer, set at start (default 30000)
  --drain-timeout MS      on SIGTERM, wait this long for jobs in hand before naking them (default 30000);
                          the worker exits within it + ~10 s, NATS reachable or not
  --max-deliver N         deliveries before a retryable failure is final (default 5)
  --no-warmup             do not load the default models when a thread starts (they load on first use)`;

function intOpt(name: string, raw: string | undefined, min = 0): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new ValidationError(`--${name} must be an integer >= ${min}, got "${raw}"`, { field: name });
  return n;
}

export async function runWorkerCommand(argv: string[], env: Record<string, string | undefined> = process.env): Promise<number> {
  let values;
  try {
    values = parseArgs({
      args: argv,
      options: {
        nats: { type: 'string' },
        concurrency: { type: 'string' },
        device: { type: 'string' },
        'data-dir': { type: 'string' },
        blobs: { type: 'string' },
        handlers: { type: 'string' },
        'metrics-port': { type: 'string' },
        limit: { type: 'string', multiple: true },
        'ack-wait': { type: 'string' },
        'drain-timeout': { type: 'string' },
        'max-deliver': { type: 'string' },
        'no-warmup': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }).values;
  } catch (e) {
    process.stderr.write(`dub worker: ${(e as Error).message.split('\n')[0]} (see dub worker --help)\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`${WORKER_USAGE}\n`);
    return 0;
  }
  const config = loadConfig({ ...env, ...(values['data-dir'] ? { DUB_DATA_DIR: values['data-dir'] } : {}) });
  checkOnnxEnv(env); // a bad DUB_ONNX_* value: exit 2 at start, not a failure of each job
  if (values.device) config.device = parseDevice(values.device);
  // The daemon warms up unless told not to (--no-warmup, or DUB_WARMUP=0 in the environment).
  if (values['no-warmup']) config.warmup = false;
  else if (env.DUB_WARMUP === undefined || env.DUB_WARMUP === '') config.warmup = true;
  const logger = createLogger({ level: config.logLevel, name: 'dub-worker' });
  const natsUrl = values.nats ?? config.natsUrl;
  if (!natsUrl) {
    process.stderr.write(`dub worker: --nats (or DUB_NATS_URL) is required\n${WORKER_USAGE}\n`);
    return 2;
  }
  let daemon: WorkerDaemon;
  try {
    const servers = parseServers(natsUrl);
    const limits: Record<string, number> = {};
    for (const l of values.limit ?? []) {
      const [name, n] = l.split('=');
      const v = intOpt('limit', n, 1);
      if (!name || v === undefined) throw new ValidationError(`--limit must be NAME=N, got "${l}"`, { field: 'limit' });
      limits[name] = v;
    }
    const blobs = values.blobs === 'fs' ? { kind: 'fs' as const, root: path.join(config.dataDir, 'blobs') } : parseBlobsOption(values.blobs ?? 'nats', servers);
    const concurrency = intOpt('concurrency', values.concurrency, 1);
    const metricsPort = intOpt('metrics-port', values['metrics-port'], 0);
    const ackWaitMs = intOpt('ack-wait', values['ack-wait'], 100);
    const drainTimeoutMs = intOpt('drain-timeout', values['drain-timeout'], 0);
    const maxDeliver = intOpt('max-deliver', values['max-deliver'], 1);
    daemon = await WorkerDaemon.start({
      servers,
      blobs,
      config,
      logger,
      limits,
      ...(values.handlers ? { handlersModule: values.handlers } : {}),
      ...(concurrency !== undefined ? { concurrency } : {}),
      ...(metricsPort !== undefined ? { metricsPort } : {}),
      ...(ackWaitMs !== undefined ? { ackWaitMs } : {}),
      ...(drainTimeoutMs !== undefined ? { drainTimeoutMs } : {}),
      ...(maxDeliver !== undefined ? { maxDeliver } : {}),
    });
  } catch (e) {
    logger.error({ err: (e as Error).message, code: isDubError(e) ? e.code : undefined }, 'worker failed to start');
    process.stderr.write(`dub worker: ${(e as Error).message}\n`);
    return 1;
  }
  await new Promise<void>((resolve) => {
    const onSignal = (sig: string) => {
      logger.info({ signal: sig }, 'signal received');
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      resolve();
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
  // The stop is bounded step by step (see WorkerDaemon.stop); this is the backstop should a step
  // still hang: log what the server was not told and exit rather than wait for a SIGKILL.
  const boundMs = daemon.options.drainTimeoutMs + daemon.options.abortGraceMs + STOP_SLACK_MS;
  const backstop = setTimeout(() => {
    const left = daemon.notAcknowledged();
    logger.error({ bound_ms: boundMs, not_acknowledged: left }, `stop did not finish within ${boundMs} ms; exiting with code 1 (job messages not acknowledged: ${left.map((u) => u.job_id ?? '(invalid job)').join(', ') || 'none'})`);
    process.exit(1);
  }, boundMs);
  backstop.unref();
  await daemon.stop();
  clearTimeout(backstop);
  // Everything the daemon opened is closed now; whatever still holds the event loop (a handlers
  // module's own socket or timer) must not keep a stopped worker alive.
  exitIfStillRunning(logger, 'still running 3 s after "worker stopped"; exiting');
  return 0;
}

/** What a stop may take beyond the drain timeout and the abort grace: the fetch, the threads' dispose, the connection's close. */
const STOP_SLACK_MS = 10_000;
