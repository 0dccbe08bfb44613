/**
 * Give a re-encoded video the frame times of the video it was made from: a frame-by-frame
 * re-render (the lips stage) writes constant-rate frames from 0, and this copies its packets
 * (no re-encode) with each frame's presentation time set to the source frame's, so a picture that
 * starts late or runs at a variable rate keeps every frame where it was.
 *
 * The times are mapped by a piecewise-linear function of the frame number fitted to the source's
 * frame times within `toleranceSec` (the `setts` bitstream filter evaluates it per packet, for
 * pts and dts alike, so decode order and B-frame offsets stay valid): a constant-rate source is
 * one piece, a rate change adds one, a jittery phone recording a few per second at most. Above
 * `maxPieces` the tolerance doubles (up to a quarter frame), then only the start is shifted.
 */
import { DubError, resolveContext, type PartialContext } from '@dub/core';
import { faststartArgs } from './container.js';
import { runFfmpeg, runFfprobe } from './ffmpeg.js';
import { tools, type MediaToolOptions } from './tools.js';

export interface RetimeOptions extends MediaToolOptions {
  /** Largest difference allowed between a frame's time and the source frame's (default 0.5 ms). */
  toleranceSec?: number;
  /** Most pieces of the mapping (default 256). */
  maxPieces?: number;
}

export interface RetimeResult {
  file: string;
  /** 'pieces': every frame at its source frame's time (within the tolerance); 'shift': the frame counts differ, only the start was moved; 'none': already in place. */
  mode: 'pieces' | 'shift' | 'none';
  pieces: number;
  /** Largest |frame time - source frame time| (s) with `pieces`. */
  maxErrorSec: number;
}

/** Presentation times of a file's video frames (its packets' pts, sorted), and the rate it states. */
async function frameTimes(file: string, opts: MediaToolOptions, ctx: ReturnType<typeof resolveContext>): Promise<{ times: number[]; rate: number; end: number | undefined }> {
  const text = await runFfprobe(['-select_streams', 'v:0', '-show_entries', 'packet=pts_time:stream=r_frame_rate,start_time,duration', '-of', 'json', '--', file], tools(opts), ctx);
  const j = JSON.parse(text) as { packets?: { pts_time?: string }[]; streams?: { r_frame_rate?: string; start_time?: string; duration?: string }[] };
  const times = [...new Set((j.packets ?? []).map((p) => Number(p.pts_time)).filter((t) => Number.isFinite(t)))].sort((a, b) => a - b);
  const s = j.streams?.[0] ?? {};
  const [n, d] = (s.r_frame_rate ?? '0/1').split('/').map(Number) as [number, number | undefined];
  const rate = d ? n / d : n;
  const start = Number(s.start_time);
  const duration = Number(s.duration);
  return { times, rate: Number.isFinite(rate) ? rate : 0, end: Number.isFinite(start) && Number.isFinite(duration) ? start + duration : undefined };
}

/** Breakpoints (frame number, time) of a continuous piecewise-linear fit of `times` within `tol`. */
export function fitPieces(times: readonly number[], tol: number): { x: number; y: number }[] {
  const pts: { x: number; y: number }[] = [{ x: 0, y: times[0]! }];
  let x0 = 0;
  let y0 = times[0]!;
  let lo = -Infinity;
  let hi = Infinity;
  for (let i = 1; i < times.length; i++) {
    const a = (times[i]! - tol - y0) / (i - x0);
    const b = (times[i]! + tol - y0) / (i - x0);
    if (Math.max(lo, a) <= Math.min(hi, b)) {
      lo = Math.max(lo, a);
      hi = Math.min(hi, b);
      continue;
    }
    // close the piece at the previous frame, on the line through the middle of the allowed slopes
    const slope = (lo + hi) / 2;
    const x = i - 1;
    const y = y0 + slope * (x - x0);
    pts.push({ x, y });
    x0 = x;
    y0 = y;
    lo = (times[i]! - tol - y0) / (i - x0);
    hi = (times[i]! + tol - y0) / (i - x0);
  }
  if (times.length > 1) {
    const x = times.length - 1;
    const slope = Number.isFinite(lo) ? (lo + hi) / 2 : times[x]! - y0;
    pts.push({ x, y: y0 + slope * (x - x0) });
  }
  return pts;
}

/** The fit's value at frame x (linear beyond both ends). */
function evalPieces(p: readonly { x: number; y: number }[], x: number): number {
  if (p.length === 1) return p[0]!.y;
  let k = 1;
  while (k < p.length - 1 && x > p[k]!.x) k++;
  const a = p[k - 1]!;
  const b = p[k]!;
  return a.y + ((b.y - a.y) * (x - a.x)) / (b.x - a.x);
}

/** The fit as an ffmpeg expression of x: a line plus one hinge per inner breakpoint (no nesting). */
function piecesExpr(p: readonly { x: number; y: number }[], x: string): string {
  if (p.length === 1) return p[0]!.y.toFixed(9);
  const slopes = p.slice(1).map((b, k) => (b.y - p[k]!.y) / (b.x - p[k]!.x));
  let e = `${p[0]!.y.toFixed(9)}+${slopes[0]!.toFixed(12)}*(${x})`;
  for (let k = 1; k < slopes.length; k++) {
    const c = slopes[k]! - slopes[k - 1]!;
    if (c !== 0) e += `+${c.toFixed(12)}*max(0\\,(${x})-${p[k]!.x})`;
  }
  return e.replace(/\+-/g, '-');
}

/** Copy `input`'s video (constant rate, from 0) into `output` with the frame times of `like`'s video. */
export async function retimeLike(input: string, like: string, output: string, opts: RetimeOptions = {}, context: PartialContext = {}): Promise<RetimeResult> {
  const ctx = resolveContext(context);
  const [src, own] = await Promise.all([frameTimes(like, opts, ctx), frameTimes(input, opts, ctx)]);
  if (!own.times.length || !(own.rate > 0)) throw new DubError('invalid_input', `retime: ${input} has no video frames at a known rate`);
  const step = 1 / own.rate;
  const x = `(PTS*TB-${own.times[0]!.toFixed(9)})/${step.toFixed(12)}`;
  const xd = `(DTS*TB-${own.times[0]!.toFixed(9)})/${step.toFixed(12)}`;
  let mode: RetimeResult['mode'];
  let fit: { x: number; y: number }[];
  let maxErrorSec = 0;
  if (src.times.length === own.times.length && src.times.length > 0) {
    const quarter = src.times.length > 1 ? (src.times[src.times.length - 1]! - src.times[0]!) / (src.times.length - 1) / 4 : step / 4;
    let tol = opts.toleranceSec ?? 0.0005;
    fit = fitPieces(src.times, tol);
    while (fit.length - 1 > (opts.maxPieces ?? 256) && tol * 2 <= quarter) fit = fitPieces(src.times, (tol *= 2));
    mode = fit.length - 1 > (opts.maxPieces ?? 256) ? 'shift' : 'pieces';
    if (mode === 'pieces') maxErrorSec = Math.max(...src.times.map((t, i) => Math.abs(evalPieces(fit, i) - t)));
  } else {
    mode = 'shift';
    fit = [];
  }
  if (mode === 'shift') {
    ctx.logger.warn({ input, like, frames: own.times.length, sourceFrames: src.times.length }, 'retime: frame counts differ or the rate varies too often; only the start is moved');
    const x0 = src.times[0] ?? 0;
    fit = [{ x: 0, y: x0 }, { x: 1, y: x0 + step }];
  }
  if (mode === 'pieces' && fit.length === 2 && Math.abs(fit[0]!.y - own.times[0]!) < 1e-6 && Math.abs(fit[1]!.y - fit[0]!.y - step) < 1e-9) mode = 'none';
  const last = src.end !== undefined && src.times.length ? Math.max(0, src.end - src.times[src.times.length - 1]!) : 0;
  const count = own.times.length;
  const setts = [`pts=(${piecesExpr(fit, x)})/TB`, `dts=(${piecesExpr(fit, xd)})/TB`];
  // the last frame lasts as long as the source's did (the stream ends where the source's ended)
  if (last > 0) setts.push(`duration=if(eq(N\\,${count - 1})\\,${last.toFixed(9)}/TB\\,DURATION)`);
  await runFfmpeg(['-i', input, '-map', '0:v:0', '-c', 'copy', '-bsf:v', `setts=${setts.join(':')}`, ...faststartArgs(output), output], { ...tools(opts), stage: 'retime', progress: false }, ctx);
  return { file: output, mode, pieces: Math.max(1, fit.length - 1), maxErrorSec };
}
