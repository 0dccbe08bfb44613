/**
 * Entry of a job thread: opens its own blob store and ONNX session cache, imports the handlers
 * module, runs one job at a time and posts events, follow-up jobs, progress and limit requests to
 * the main thread. Sessions are released on 'dispose' (graceful shutdown).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { AbortedError, createLogger, type EmittedEvent, type Job } from '@dub/core';
import { SessionCache } from '@dub/onnx';
import { toJobError, fromJobError } from './failure.js';
import { loadHandlersModule, type HandlersModule } from './handlers-module.js';
import { buildRuntime, callHandler } from './job-runtime.js';
import { readJobTextFromBlobs } from './job-text.js';
import { openBlobStore, type OpenedStore } from './store-spec.js';
import type { FromThread, ThreadData, ToThread } from './thread-protocol.js';

const data = workerData as ThreadData;
const port = parentPort!;
const logger = createLogger({ level: data.logLevel, name: 'dub-worker' }).child({ thread: data.index });
const sessions = new SessionCache({ device: data.config.device, threads: data.config.onnxThreads, logger });
const post = (m: FromThread) => port.postMessage(m);

let nextId = 1;
const pending = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();
const runs = new Map<number, AbortController>();

function request(m: { t: 'emit'; runId: number; event: EmittedEvent } | { t: 'enqueue'; runId: number; job: Job } | { t: 'acquire'; runId: number; name: string }): { id: number; done: Promise<void> } {
  const id = nextId++;
  const done = new Promise<void>((resolve, reject) => pending.set(id, { resolve, reject }));
  post({ ...m, id } as FromThread);
  return { id, done };
}

let mod: HandlersModule;
let opened: OpenedStore;

async function runJob(runId: number, job: Job, attempt: number): Promise<void> {
  const ac = new AbortController();
  runs.set(runId, ac);
  try {
    const rt = buildRuntime(job, attempt, {
      store: opened.store,
      config: data.config,
      sessions,
      logger,
      signal: ac.signal,
      hooks: {
        emit: (event) => request({ t: 'emit', runId, event }).done,
        enqueue: (j) => request({ t: 'enqueue', runId, job: j }).done,
        progress: (progress) => post({ t: 'progress', runId, progress }),
      },
      withLimit: async (name, fn) => {
        const r = request({ t: 'acquire', runId, name });
        await r.done;
        try {
          return await fn();
        } finally {
          post({ t: 'release', runId, id: r.id });
        }
      },
    });
    await callHandler(mod.handlers, await readJobTextFromBlobs(job, opened.store), rt);
    const providers = Object.fromEntries(sessions.providers);
    await releaseUnlessKept();
    post({ t: 'done', runId, providers });
  } catch (e) {
    const err = ac.signal.aborted && !(e instanceof AbortedError) ? toJobError(new AbortedError(String(ac.signal.reason ?? 'aborted'), { cause: e })) : toJobError(e);
    const providers = Object.fromEntries(sessions.providers);
    await releaseUnlessKept();
    post({ t: 'done', runId, error: err, providers });
  } finally {
    runs.delete(runId);
  }
}

/** DUB_KEEP_MODELS=0: the job's models go with it (a thread runs one job at a time), before the next job can start. */
async function releaseUnlessKept(): Promise<void> {
  if (data.config.keepModels === false) await sessions.disposeAll();
}

port.on('message', (m: ToThread) => {
  switch (m.t) {
    case 'run':
      void runJob(m.runId, m.job, m.attempt);
      break;
    case 'abort':
      runs.get(m.runId)?.abort(m.reason);
      break;
    case 'reply': {
      const p = pending.get(m.id);
      pending.delete(m.id);
      if (m.error) p?.reject(fromJobError(m.error));
      else p?.resolve();
      break;
    }
    case 'dispose':
      void (async () => {
        await sessions.disposeAll();
        await opened?.close().catch(() => undefined);
        post({ t: 'disposed' });
        port.close();
      })();
      break;
  }
});

try {
  opened = await openBlobStore(data.store);
  mod = await loadHandlersModule(data.handlersModule);
  if (mod.warmup) await mod.warmup({ store: opened.store, config: data.config, sessions, logger });
  post({ t: 'ready', providers: Object.fromEntries(sessions.providers) });
} catch (e) {
  post({ t: 'init_failed', error: toJobError(e) });
}
