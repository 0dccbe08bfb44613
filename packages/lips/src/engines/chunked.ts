/**
 * Chunked rendering: the lips video is made of independently encoded chunks of `chunkFrames`
 * frames, each keyed by everything that decides its pixels (the source video, the engine and its
 * settings, and for each of its frames the face and the engine's per-frame drive: mouth amount,
 * mel window). A chunk whose key is in the store is reused as it is; the others are rendered and
 * encoded alone (a fresh encoder per chunk, so the same frames always give the same bytes), then
 * every chunk is concatenated without re-encoding. After a script edit only the chunks whose
 * speech changed are rendered again, and every other frame is bit-identical to a full render.
 */
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { reportProgress, throwIfAborted } from '@dub/core';
import { runFfmpeg } from '@dub/media';
import { readFrames } from '../video/frame-reader.js';
import { FrameWriter } from '../video/frame-writer.js';
import { yuvTransport } from './frame-loop.js';
import type { VideoInfo } from '../video/video-info.js';
import type { FaceTrack, LipsContext, LipsRenderOptions, PreparedLips } from '../types.js';

/** Where chunks are kept between runs (the pipeline keeps them as blobs). */
export interface LipsChunkStore {
  /** A local file holding the chunk with this key, or undefined. */
  get(key: string): Promise<string | undefined>;
  /** Keep `file` (a finished chunk) under `key`. */
  put(key: string, file: string): Promise<void>;
}

export interface ChunkedRenderResult {
  file: string;
  frames: number;
  changedFrames: number;
  engineMs: number;
  chunks: number;
  /** Chunks rendered in this run (the others were reused). */
  renderedChunks: number;
  /** Frame ranges [start, end) that were rendered in this run. */
  renderedSpans: { start: number; end: number }[];
}

/** Default chunk length: 4 s of frames (a re-dub of one line re-renders its chunks only). */
export const DEFAULT_CHUNK_SECONDS = 4;

export async function renderChunked(
  video: VideoInfo,
  faces: FaceTrack,
  prepared: PreparedLips,
  output: string,
  opts: LipsRenderOptions & { identity: string; chunkFrames?: number; store: LipsChunkStore },
  ctx: LipsContext,
): Promise<ChunkedRenderResult> {
  const total = Math.max(1, faces.frameCount);
  // an engine with a yuv420p operation gets the decoder's frames as they are (see frame-loop.ts)
  const yuv = yuvTransport(video, prepared.opYuv);
  const pixelFormat = yuv ? ('yuv420p' as const) : ('rgb24' as const);
  const size = opts.chunkFrames ?? Math.max(1, Math.round(video.fps * DEFAULT_CHUNK_SECONDS));
  const count = Math.ceil(total / size);
  const keys: string[] = [];
  for (let c = 0; c < count; c++) {
    const h = createHash('sha256');
    h.update(JSON.stringify({ v: 1, ...(yuv ? { pixelFormat } : {}), identity: opts.identity, engine: prepared.identity, workScale: opts.workScale, encode: opts.encode, width: video.width, height: video.height, rate: video.rate, start: c * size, size }));
    for (let i = c * size; i < Math.min(total, (c + 1) * size); i++) {
      const face = faces.frames[Math.min(i, faces.frames.length - 1)] ?? null;
      h.update(JSON.stringify(face));
      h.update(face ? await prepared.frameKey(i) : '-');
    }
    keys.push(h.digest('hex'));
  }
  const files: (string | undefined)[] = await Promise.all(keys.map((k) => opts.store.get(k)));
  const dirty = files.map((f) => f === undefined);
  const renderedSpans: { start: number; end: number }[] = [];
  for (let c = 0; c < count; c++) {
    if (!dirty[c]) continue;
    const start = c * size;
    const end = Math.min(total, start + size);
    const last = renderedSpans.at(-1);
    if (last && last.end === start) last.end = end;
    else renderedSpans.push({ start, end });
  }

  let changed = 0;
  let engineMs = 0;
  let frames = 0;
  if (dirty.some(Boolean)) {
    let writer: FrameWriter | undefined;
    let chunk = -1;
    // A finished chunk's encoder drains its last frames and writes its file while the next chunk's
    // frames are decoded, warped and encoded (one chunk closing at a time): the same encoders get
    // the same frames, so the same bytes, but the decoder and the warp no longer wait for it.
    let closing: Promise<void> | undefined;
    const finish = async (): Promise<void> => {
      const previous = closing;
      closing = undefined;
      if (previous) await previous;
      if (!writer) return;
      const w = writer;
      const c = chunk;
      writer = undefined;
      closing = (async () => {
        await w.close();
        await opts.store.put(keys[c]!, w.output);
        files[c] = w.output;
      })();
      // a failure is thrown where it is awaited (the next finish or the end); never unhandled
      closing.catch(() => undefined);
    };
    try {
      // Only the dirty chunks' frames come out of the decoder (in order); it stops after the last.
      const wanted = renderedSpans.reduce((a, s) => a + s.end - s.start, 0);
      let got = 0;
      let span = 0;
      let index = renderedSpans[0]!.start;
      for await (const frame of readFrames(video.file, { ...opts.media, width: video.width, height: video.height, spans: renderedSpans, pixelFormat }, ctx)) {
        throwIfAborted(ctx.signal);
        if (index >= renderedSpans[span]!.end) index = renderedSpans[++span]!.start;
        const c = Math.floor(index / size);
        if (c !== chunk) {
          await finish();
          chunk = c;
          writer = FrameWriter.start(path.join(opts.tmpDir, `chunk-${String(c).padStart(5, '0')}.mp4`), { ...opts.media, width: video.width, height: video.height, rate: video.rate, crf: opts.encode.crf, preset: opts.encode.preset, pixelFormat }, ctx);
        }
        const face = faces.frames[Math.min(index, faces.frames.length - 1)] ?? null;
        if (face) {
          const t0 = performance.now();
          if (yuv ? prepared.opYuv!(frame, face, index) : await prepared.op(frame, face, index)) changed++;
          engineMs += performance.now() - t0;
        }
        await writer!.write(frame);
        index++;
        got++;
        if (got % 5 === 0) reportProgress(ctx, 'lips', (0.95 * got) / wanted);
        if (got === wanted) break;
      }
      // the decoder delivered every frame asked for: the video has its stated frames (else its last chunk is short or missing, as a full decode would find)
      frames = got === wanted ? total : index;
      await finish();
      await finish();
    } catch (e) {
      await writer?.abort();
      await closing?.catch(() => undefined);
      throw e;
    }
  } else {
    frames = total;
  }
  // A chunk the decoder never reached (the container stated more frames than it has) cannot be joined.
  const missing = files.findIndex((f) => f === undefined);
  if (missing >= 0) throw new RangeError(`lips: chunk ${missing} has no frames (the video has ${frames} decodable frames, ${total} stated)`);
  const list = path.join(opts.tmpDir, 'chunks.txt');
  await writeFile(list, files.map((f) => `file '${f!.replace(/'/g, "'\\''")}'`).join('\n') + '\n');
  await runFfmpeg(['-f', 'concat', '-safe', '0', '-i', list, '-map', '0:v:0', '-c', 'copy', '-movflags', '+faststart', output], { ...opts.media, stage: 'concat_chunks', progress: false }, ctx);
  reportProgress(ctx, 'lips', 1);
  return { file: output, frames: dirty.some(Boolean) ? frames : total, changedFrames: changed, engineMs, chunks: count, renderedChunks: dirty.filter(Boolean).length, renderedSpans };
}
