/**
 * What the lips stage needs to know about a video: its displayed size (frames come out of
 * ffmpeg rotated upright), its frame rate as ffmpeg's exact rational, and its frame count.
 */
import { DubError, resolveContext, type PartialContext } from '@dub/core';
import { probe, runFfprobe, type MediaToolOptions } from '@dub/media';

export interface VideoInfo {
  file: string;
  width: number;
  height: number;
  /** Frames per second. */
  fps: number;
  /** The same rate as ffmpeg writes it ("30000/1001"), for the encoder. */
  rate: string;
  /** Frame count (stated by the container, else duration x fps). */
  frameCount: number;
  duration: number;
  /**
   * Variable frame rate only: each frame's presentation time, in seconds from the first frame
   * (undefined at a constant rate, where frame i is at i / fps). The engines drive frame i by the
   * speech at this time.
   */
  frameTimes?: Float64Array;
}

/** Frame `i`'s time from the first frame: its own where the rate varies, else i / fps. */
export function frameTime(video: Pick<VideoInfo, 'fps' | 'frameTimes'>, i: number): number {
  return video.frameTimes?.[i] ?? i / video.fps;
}

/** Deviation from i / fps (s) above which a video counts as variable-rate. */
const VFR_TOLERANCE = 0.002;

export async function videoInfo(file: string, media: MediaToolOptions = {}, context: PartialContext = {}): Promise<VideoInfo> {
  const ctx = resolveContext(context);
  const info = await probe(file, media, ctx);
  if (!info.video) throw new DubError('invalid_input', `lips: no video stream in ${file}`, { details: { file } });
  const raw = JSON.parse(await runFfprobe(['-select_streams', 'v:0', '-show_entries', 'stream=avg_frame_rate,r_frame_rate', '-of', 'json', file], media, ctx)) as {
    streams?: { avg_frame_rate?: string; r_frame_rate?: string }[];
  };
  const s = raw.streams?.[0] ?? {};
  const rate = [s.avg_frame_rate, s.r_frame_rate].find((r) => r && rateValue(r) > 0) ?? String(info.video.fps || 25);
  const fps = rateValue(rate);
  const duration = info.video.duration ?? info.duration;
  const frameCount = info.video.frames ?? Math.round(duration * fps);
  const frameTimes = await variableFrameTimes(file, fps, media, ctx);
  return { file, width: info.video.displayWidth, height: info.video.displayHeight, fps, rate, frameCount, duration, ...(frameTimes ? { frameTimes } : {}) };
}

/** The frames' times from the first frame (packet pts, sorted) when they stray from i / fps; else undefined. */
async function variableFrameTimes(file: string, fps: number, media: MediaToolOptions, ctx: PartialContext): Promise<Float64Array | undefined> {
  if (!(fps > 0)) return undefined;
  const text = await runFfprobe(['-select_streams', 'v:0', '-show_entries', 'packet=pts_time', '-of', 'csv=p=0', '--', file], media, ctx);
  const pts = [...new Set(text.split('\n').map((l) => Number(l.trim().split(',')[0])).filter((t) => Number.isFinite(t)))].sort((a, b) => a - b);
  if (pts.length < 2) return undefined;
  const times = Float64Array.from(pts, (t) => t - pts[0]!);
  return times.some((t, i) => Math.abs(t - i / fps) > VFR_TOLERANCE) ? times : undefined;
}

function rateValue(r: string): number {
  const [n, d] = r.split('/').map(Number);
  const v = d === undefined ? n : d ? n / d : 0;
  return Number.isFinite(v) ? v : 0;
}
