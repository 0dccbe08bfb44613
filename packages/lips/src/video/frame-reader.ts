/**
 * Decoded video frames as a stream: ffmpeg writes raw rgb24 frames to a pipe and this yields
 * them one by one. The pipe's buffer holds about two frames, so memory stays bounded whatever
 * the video's length; leaving the loop early stops ffmpeg.
 */
import { PassThrough } from 'node:stream';
import { AbortedError, resolveContext, throwIfAborted, type PartialContext } from '@dub/core';
import { runFfmpeg, type MediaToolOptions } from '@dub/media';
import { createImage, type RgbImage } from '../image/rgb-image.js';

export interface ReadFramesOptions extends MediaToolOptions {
  /** Size of the frames ffmpeg delivers (scaled); the video's own size by default. */
  width: number;
  height: number;
  /** Deliver every Nth frame only (frames 0, N, 2N, ...); default 1. */
  every?: number;
  /**
   * Deliver only the frames of these ranges [start, end) of frame numbers, in order (the others
   * are decoded and dropped inside ffmpeg, not converted or piped); ignored with `every`.
   */
  spans?: readonly { start: number; end: number }[];
  /**
   * rgb24 (default; frames are RgbImage) or yuv420p: the decoder's own planes (I420, even sizes
   * only), no colour conversion, half the bytes.
   */
  pixelFormat?: 'rgb24' | 'yuv420p';
}

export async function* readFrames(file: string, opts: ReadFramesOptions, context: PartialContext = {}): AsyncGenerator<RgbImage> {
  const ctx = resolveContext(context);
  throwIfAborted(ctx.signal);
  const { width, height } = opts;
  const yuv = opts.pixelFormat === 'yuv420p';
  if (yuv && (width % 2 || height % 2)) throw new RangeError(`yuv420p frames have an even size, got ${width}x${height}`);
  const frameBytes = yuv ? (width * height * 3) / 2 : width * height * 3;
  const newFrame = (): RgbImage => (yuv ? { width, height, data: new Uint8Array(frameBytes) } : createImage(width, height));
  const stop = new AbortController();
  const signal = ctx.signal ? AbortSignal.any([ctx.signal, stop.signal]) : stop.signal;
  const filters: string[] = [];
  // ffmpeg fails on a flat sum of a few hundred ranges (its expression parser recurses on each
  // term), so the ranges are a balanced tree of if(lt(n, ...)) (`selectExpression`); past
  // MAX_SELECT_SPANS (the argument's length) the nearest ranges are decoded as one and the frames
  // between them dropped here (`wanted`)
  const decodeSpans = (opts.every ?? 1) <= 1 && opts.spans && opts.spans.length > MAX_SELECT_SPANS ? mergeSpans(opts.spans, MAX_SELECT_SPANS) : opts.spans;
  const wanted = decodeSpans !== opts.spans ? spanCursor(decodeSpans!, opts.spans!) : undefined;
  if ((opts.every ?? 1) > 1) filters.push(`select=not(mod(n\\,${opts.every}))`);
  else if (decodeSpans) filters.push(`select=${selectExpression(decodeSpans)}`);
  filters.push(`scale=${width}:${height}:flags=bilinear`);
  const args = ['-i', file, '-map', '0:v:0', '-an', '-sn', '-vf', filters.join(','), '-fps_mode', 'passthrough', '-f', 'rawvideo', '-pix_fmt', yuv ? 'yuv420p' : 'rgb24', 'pipe:1'];
  const pipe = new PassThrough({ highWaterMark: Math.max(frameBytes * 2, 1 << 16) });
  let failure: unknown;
  const done = runFfmpeg(args, { ...opts, stage: 'decode_frames', stdout: pipe, progress: false }, { ...ctx, signal }).then(
    () => undefined,
    (e: unknown) => {
      failure = e;
    },
  );
  let frame = newFrame();
  let fill = 0;
  let finishedEarly = true;
  try {
    for await (const chunk of pipe as AsyncIterable<Buffer>) {
      let at = 0;
      while (at < chunk.length) {
        const n = Math.min(frameBytes - fill, chunk.length - at);
        frame.data.set(chunk.subarray(at, at + n), fill);
        fill += n;
        at += n;
        if (fill === frameBytes) {
          if (wanted && !wanted()) {
            fill = 0;
            continue;
          }
          yield frame;
          frame = newFrame();
          fill = 0;
        }
      }
    }
    finishedEarly = false;
  } finally {
    if (finishedEarly) {
      stop.abort('frames no longer needed');
      pipe.destroy();
    }
    await done;
  }
  if (failure !== undefined && !(failure instanceof AbortedError && stop.signal.aborted && !ctx.signal?.aborted)) throw failure;
  throwIfAborted(ctx.signal);
}

/** Most ranges in one select expression (about 40 characters each; one argument holds 128 KiB). */
export const MAX_SELECT_SPANS = 1000;

/**
 * ffmpeg's select expression true on the frames of `spans` (sorted, disjoint): up to 8 ranges a
 * sum of between(n, start, end - 1), more a balanced tree of if(lt(n, start of the right half), left, right).
 */
export function selectExpression(spans: readonly { start: number; end: number }[]): string {
  if (!spans.length) return '0';
  const tree = (a: number, b: number): string => {
    if (b - a <= 8) return spans.slice(a, b).map((r) => `between(n\\,${r.start}\\,${r.end - 1})`).join('+');
    const m = (a + b) >> 1;
    return `if(lt(n\\,${spans[m]!.start})\\,${tree(a, m)}\\,${tree(m, b)})`;
  };
  return tree(0, spans.length);
}

/** `spans` (sorted, disjoint) as at most `max` ranges: the smallest gaps between them are closed. */
export function mergeSpans(spans: readonly { start: number; end: number }[], max: number): { start: number; end: number }[] {
  if (spans.length <= max) return spans.map((s) => ({ ...s }));
  const gaps = spans.slice(1).map((s, i) => ({ i, gap: s.start - spans[i]!.end }));
  const close = new Set(gaps.sort((a, b) => a.gap - b.gap || a.i - b.i).slice(0, spans.length - max).map((g) => g.i));
  const out: { start: number; end: number }[] = [{ ...spans[0]! }];
  for (let i = 1; i < spans.length; i++) {
    if (close.has(i - 1)) out[out.length - 1]!.end = spans[i]!.end;
    else out.push({ ...spans[i]! });
  }
  return out;
}

/** Called once per frame the merged ranges deliver, in order: whether that frame is in `spans`. */
function spanCursor(merged: readonly { start: number; end: number }[], spans: readonly { start: number; end: number }[]): () => boolean {
  let m = 0;
  let at = merged[0]?.start ?? 0;
  let s = 0;
  return () => {
    while (m < merged.length && at >= merged[m]!.end) at = merged[++m]?.start ?? at;
    const n = at++;
    while (s < spans.length && spans[s]!.end <= n) s++;
    return s < spans.length && n >= spans[s]!.start;
  };
}
