/**
 * Single lines spoken for the studio: Re-dub of one segment and voice previews per speaker.
 *
 * The work is @dub/pipeline's generation code (redubSegment, previewSpeakerVoice: the same
 * engines, voice plan and artifact cache as generate-version), run in one worker thread of the
 * API process, so ONNX inference (Piper, OpenVoice) never runs on the event loop that answers
 * HTTP; espeak-ng and ffmpeg are child processes either way. The thread starts on the first
 * request, keeps its ONNX sessions, takes requests one at a time, and is replaced when it dies.
 * It reopens the blob store by its path, so the store must be a filesystem one (the embedded
 * `dub serve`, or --blobs fs:PATH); with another store the endpoints answer 501.
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { DubError, FsBlobStore, type BlobStore, type ErrorCode, type GenerateVersionJob, type Logger } from '@dub/core';
import { NotSupportedError, ShuttingDownError } from './errors.js';
import type { PreviewVoiceRequest, PreviewVoiceResult, RedubSegmentRequest, RedubSegmentResult } from '@dub/pipeline';

export type LineSynthRequest =
  | { type: 'redub'; id: number; job: GenerateVersionJob; request: RedubSegmentRequest }
  | { type: 'preview'; id: number; job: GenerateVersionJob; request: PreviewVoiceRequest };

export type LineSynthReply =
  | { type: 'result'; id: number; result: RedubSegmentResult | PreviewVoiceResult }
  | { type: 'error'; id: number; error: { code: string; message: string; status: number; details: Record<string, unknown> | null } };

/** The compiled thread entry (src/ under a test runner that compiles, else dist/). */
function threadEntry(): URL {
  const here = new URL('./line-synth-thread.js', import.meta.url);
  if (fs.existsSync(fileURLToPath(here))) return here;
  return new URL('../dist/line-synth-thread.js', import.meta.url);
}

interface Pending {
  resolve(v: unknown): void;
  reject(e: Error): void;
}

export class LineSynth {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private chain: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly store: BlobStore,
    private readonly logger: Logger,
  ) {}

  /** Why lines cannot be spoken here, or undefined when they can. */
  unavailable(): string | undefined {
    if (!(this.store instanceof FsBlobStore)) return 're-dub and voice previews need the API\u2019s blob store on a filesystem path (the embedded dub serve, or --blobs fs:PATH); this API stores blobs elsewhere';
    return undefined;
  }

  redub(job: GenerateVersionJob, request: RedubSegmentRequest): Promise<RedubSegmentResult> {
    return this.enqueue({ type: 'redub', job, request }) as Promise<RedubSegmentResult>;
  }

  preview(job: GenerateVersionJob, request: PreviewVoiceRequest): Promise<PreviewVoiceResult> {
    return this.enqueue({ type: 'preview', job, request }) as Promise<PreviewVoiceResult>;
  }

  /** One request at a time: the thread's engines and sessions are not shared between two. */
  private enqueue(m: Omit<LineSynthRequest, 'id'>): Promise<unknown> {
    const run = this.chain.then(
      () => this.send(m),
      () => this.send(m),
    );
    this.chain = run.catch(() => undefined);
    return run;
  }

  private send(m: Omit<LineSynthRequest, 'id'>): Promise<unknown> {
    if (this.closed) return Promise.reject(new ShuttingDownError());
    const why = this.unavailable();
    if (why) return Promise.reject(new NotSupportedError(why));
    const w = this.thread();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      w.postMessage({ ...m, id });
    });
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(threadEntry(), { workerData: { storeRoot: (this.store as FsBlobStore).root } });
    w.unref();
    w.on('message', (r: LineSynthReply | { type: 'closed' }) => {
      if (r.type === 'closed') return;
      const p = this.pending.get(r.id);
      if (!p) return;
      this.pending.delete(r.id);
      if (r.type === 'result') {
        const wav = (r.result as { wav: Uint8Array }).wav;
        p.resolve({ ...r.result, wav: Buffer.from(wav.buffer, wav.byteOffset, wav.byteLength) });
      } else {
        if (r.error.status >= 500) this.logger.error({ error: r.error }, 'line synthesis failed');
        p.reject(new DubError(r.error.code as ErrorCode, r.error.status >= 500 ? 'line synthesis failed' : r.error.message, { status: r.error.status, ...(r.error.details ? { details: r.error.details } : {}) }));
      }
    });
    const fail = (e: Error) => {
      if (this.worker !== w) return;
      this.worker = undefined;
      this.logger.error({ err: e }, 'line synthesis thread stopped');
      for (const [id, p] of this.pending) {
        this.pending.delete(id);
        p.reject(new DubError('internal_error', 'line synthesis thread stopped', { status: 500, cause: e }));
      }
    };
    w.on('error', fail);
    w.on('exit', (code) => fail(new Error(`exit code ${code}`)));
    this.worker = w;
    return w;
  }

  async close(): Promise<void> {
    this.closed = true;
    const w = this.worker;
    if (!w) return;
    this.worker = undefined;
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, 5000);
      w.once('message', (r: { type: string }) => {
        if (r.type === 'closed') {
          clearTimeout(t);
          resolve();
        }
      });
      w.once('exit', () => {
        clearTimeout(t);
        resolve();
      });
      w.postMessage({ type: 'close' });
    });
    await w.terminate();
  }
}
