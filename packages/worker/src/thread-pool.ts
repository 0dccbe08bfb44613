/**
 * A pool of job threads (worker_threads), one job per thread at a time, so inference never runs
 * on the event loop that talks to NATS. Events, follow-up jobs, progress and per-stage limit
 * requests are posted back here. A thread that dies or ignores an abort is replaced.
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { AbortedError, DubError, type DubConfig, type Job, type Logger } from '@dub/core';
import type { JobExecutor, JobHooks } from './executor.js';
import { fromJobError, toJobError, type JobError } from './failure.js';
import type { NamedLimiter } from './limiter.js';
import type { BlobStoreSpec } from './store-spec.js';
import type { FromThread, ThreadData, ToThread } from './thread-protocol.js';

export interface ThreadPoolOptions {
  size: number;
  handlersModule: string;
  store: BlobStoreSpec;
  config: DubConfig;
  logger: Logger;
  limiter: NamedLimiter;
  /** How long an aborted job gets to return before its thread is terminated. */
  abortGraceMs: number;
  /** How long `close()` waits for each thread to release its sessions. Default 5 s. */
  disposeTimeoutMs?: number;
}

/** The compiled thread entry (from src/ under a test runner, the built dist/ file). */
function threadEntry(): URL {
  const here = new URL('./thread-entry.js', import.meta.url);
  if (fs.existsSync(fileURLToPath(here))) return here;
  return new URL('../dist/thread-entry.js', import.meta.url);
}

interface RunState {
  runId: number;
  hooks: JobHooks;
  signal: AbortSignal;
  resolve: () => void;
  reject: (e: Error) => void;
  permits: Map<number, () => void>;
  graceTimer?: NodeJS.Timeout;
}

class JobThread {
  readonly worker: Worker;
  readonly ready: Promise<void>;
  run: RunState | undefined;
  exited = false;
  /** Being replaced: takes no more jobs. */
  retired = false;
  private onDisposed: (() => void) | undefined;

  constructor(readonly index: number, private readonly pool: ThreadPool, data: ThreadData) {
    this.worker = new Worker(threadEntry(), { workerData: data });
    let readyResolve!: () => void;
    let readyReject!: (e: Error) => void;
    this.ready = new Promise<void>((res, rej) => {
      readyResolve = res;
      readyReject = rej;
    });
    this.ready.catch(() => undefined);
    this.worker.on('message', (m: FromThread) => {
      if (m.t === 'ready') {
        pool.noteProviders(m.providers);
        readyResolve();
      } else if (m.t === 'init_failed') readyReject(fromJobError(m.error));
      else if (m.t === 'disposed') this.onDisposed?.();
      else pool.onMessage(this, m);
    });
    this.worker.on('error', (e) => {
      readyReject(e);
      pool.onThreadGone(this, e);
    });
    this.worker.on('exit', (code) => {
      this.exited = true;
      readyReject(new DubError('internal_error', `job thread exited with code ${code} before it was ready`, { retryable: true }));
      this.onDisposed?.();
      pool.onThreadGone(this, new DubError('internal_error', `job thread exited with code ${code}`, { retryable: true }));
    });
  }

  post(m: ToThread): void {
    if (!this.exited) this.worker.postMessage(m);
  }

  async dispose(timeoutMs: number): Promise<void> {
    if (this.exited) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.onDisposed = () => {
        clearTimeout(timer);
        resolve();
      };
      this.post({ t: 'dispose' });
    });
    await this.worker.terminate();
  }
}

export class ThreadPool implements JobExecutor {
  private threads: JobThread[] = [];
  private readonly idle: JobThread[] = [];
  private readonly waiters: ((t: JobThread) => void)[] = [];
  private readonly seen = new Map<string, string>();
  private nextRunId = 1;
  private closed = false;
  private readonly data: Omit<ThreadData, 'index'>;

  constructor(private readonly o: ThreadPoolOptions) {
    this.data = { handlersModule: o.handlersModule, store: o.store, config: o.config, logLevel: o.logger.level };
    for (let i = 0; i < o.size; i++) this.spawn(i);
  }

  private spawn(index: number): JobThread {
    const t = new JobThread(index, this, { ...this.data, index });
    this.threads[index] = t;
    this.release(t);
    return t;
  }

  /** Resolves when every thread loaded its handlers module (rejects with the first failure). */
  async ready(): Promise<void> {
    await Promise.all(this.threads.map((t) => t.ready));
  }

  private release(t: JobThread): void {
    if (t.exited || t.retired || this.closed) return;
    const w = this.waiters.shift();
    if (w) w(t);
    else this.idle.push(t);
  }

  private take(): Promise<JobThread> {
    const t = this.idle.shift();
    if (t) return Promise.resolve(t);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  async run(job: Job, attempt: number, hooks: JobHooks, signal: AbortSignal): Promise<void> {
    if (this.closed) throw new AbortedError('worker is shutting down');
    const t = await this.take();
    try {
      await t.ready;
    } catch (e) {
      this.release(t);
      throw e;
    }
    const runId = this.nextRunId++;
    return new Promise<void>((resolve, reject) => {
      const st: RunState = { runId, hooks, signal, resolve, reject, permits: new Map() };
      t.run = st;
      const onAbort = () => {
        t.post({ t: 'abort', runId, reason: typeof signal.reason === 'string' ? signal.reason : 'aborted' });
        st.graceTimer = setTimeout(() => {
          if (t.run !== st) return;
          this.o.logger.warn({ job_id: job.job_id, thread: t.index }, 'job did not return after abort; terminating its thread');
          t.retired = true;
          this.finish(t, new AbortedError('job thread terminated after abort'));
          void t.worker.terminate();
        }, this.o.abortGraceMs);
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
      t.post({ t: 'run', runId, job, attempt });
    });
  }

  private finish(t: JobThread, error?: Error): void {
    const st = t.run;
    if (!st) return;
    t.run = undefined;
    if (st.graceTimer) clearTimeout(st.graceTimer);
    for (const r of st.permits.values()) r();
    st.permits.clear();
    if (error) st.reject(error);
    else st.resolve();
    this.release(t);
  }

  /** @internal */
  onMessage(t: JobThread, m: FromThread): void {
    const st = t.run;
    if (!st || !('runId' in m) || m.runId !== st.runId) return;
    const reply = (id: number, p: Promise<unknown>) =>
      p.then(
        () => t.post({ t: 'reply', id }),
        (e: unknown) => t.post({ t: 'reply', id, error: toJobError(e) }),
      );
    switch (m.t) {
      case 'emit':
        void reply(m.id, st.hooks.emit(m.event));
        break;
      case 'enqueue':
        void reply(m.id, st.hooks.enqueue(m.job));
        break;
      case 'progress':
        st.hooks.progress(m.progress);
        break;
      case 'acquire':
        void reply(
          m.id,
          this.o.limiter.acquire(m.name, st.signal).then((release) => {
            if (t.run === st) st.permits.set(m.id, release);
            else release();
          }),
        );
        break;
      case 'release':
        st.permits.get(m.id)?.();
        st.permits.delete(m.id);
        break;
      case 'done':
        this.noteProviders(m.providers);
        this.finish(t, m.error ? fromJobError(m.error) : undefined);
        break;
    }
  }

  /** @internal */
  onThreadGone(t: JobThread, e: Error): void {
    if (this.threads[t.index] !== t) return;
    const idx = this.idle.indexOf(t);
    if (idx >= 0) this.idle.splice(idx, 1);
    if (t.run) {
      this.o.logger.error({ thread: t.index, err: e.message }, 'job thread died while running a job');
      const err: JobError = toJobError(e);
      t.run.reject(fromJobError({ ...err, retryable: true }));
      for (const r of t.run.permits.values()) r();
      t.run = undefined;
    }
    if (!this.closed) this.spawn(t.index);
  }

  /** @internal */
  noteProviders(p: Record<string, string>): void {
    for (const [model, provider] of Object.entries(p)) {
      if (this.seen.get(model) === provider) continue;
      this.seen.set(model, provider);
      this.o.logger.info({ model, provider, device: this.o.config.device }, 'model execution provider');
    }
  }

  providers(): Record<string, string> {
    return Object.fromEntries(this.seen);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const timeout = this.o.disposeTimeoutMs ?? 5000;
    await Promise.all(this.threads.map((t) => t.dispose(timeout)));
  }
}
