/**
 * ffprobe as typed data, and the classification of bad input into the contract's asset error
 * codes: unreadable or not media -> unsupported_media; no video stream -> unsupported_media;
 * no audio stream -> missing_audio_track.
 */
import { stat } from 'node:fs/promises';
import { AssetError, DubError, ProcessError, resolveContext, type PartialContext } from '@dub/core';
import { runFfprobe, type RunFfprobeOptions } from './ffmpeg.js';
import { fileIdentity, FileMemo } from './file-memo.js';
import { resolveMediaTools } from './tools.js';

/** Probes of files that have not changed since (file-memo.ts). */
const probed = new FileMemo<MediaInfo>();

export interface VideoStreamInfo {
  /** Stream index in the container. */
  index: number;
  codec: string;
  width: number;
  height: number;
  /** Frames per second (average frame rate, else the base rate); 0 when unknown. */
  fps: number;
  /** Display rotation in degrees (0, 90, 180, 270) from the display matrix, else the rotate tag. */
  rotation: number;
  /** Size as displayed: width and height swapped for 90 and 270 degrees. */
  displayWidth: number;
  displayHeight: number;
  /** Frame count when the container states it. */
  frames: number | undefined;
  pixelFormat: string | undefined;
  /** Stream duration in seconds when known. */
  duration: number | undefined;
}

export interface AudioStreamInfo {
  index: number;
  codec: string;
  channels: number;
  sampleRate: number;
  channelLayout: string | undefined;
  duration: number | undefined;
  language: string | undefined;
}

export interface MediaInfo {
  file: string;
  /** Container format as ffprobe names it, e.g. "mov,mp4,m4a,3gp,3g2,mj2", "wav". */
  format: string;
  /** Duration in seconds (container duration, else the longest stream). */
  duration: number;
  /** File size in bytes. */
  size: number;
  /** Overall bit rate in bits per second when known. */
  bitRate: number | undefined;
  /** The first video stream that is not an attached picture (cover art). */
  video: VideoStreamInfo | undefined;
  audio: AudioStreamInfo[];
}

export interface ProbeOptions extends RunFfprobeOptions {}

interface RawStream {
  index?: number;
  codec_name?: string;
  codec_type?: string;
  width?: number;
  height?: number;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  nb_frames?: string;
  pix_fmt?: string;
  duration?: string;
  sample_rate?: string;
  channels?: number;
  channel_layout?: string;
  disposition?: { attached_pic?: number };
  tags?: Record<string, string>;
  side_data_list?: { side_data_type?: string; rotation?: number }[];
}

interface RawProbe {
  streams?: RawStream[];
  format?: { format_name?: string; duration?: string; size?: string; bit_rate?: string };
}

/**
 * Probe a media file. Throws AssetError('unsupported_media') when the file cannot be read or is
 * not media ffprobe understands. Does not require any stream: see `assertDubbable`.
 */
export async function probe(file: string, opts: ProbeOptions = {}, context: PartialContext = {}): Promise<MediaInfo> {
  const ctx = resolveContext(context);
  let size: number;
  try {
    const st = await stat(file);
    if (!st.isFile()) throw new Error('not a regular file');
    size = st.size;
  } catch (e) {
    throw new AssetError('unsupported_media', `cannot read media file ${file}`, { cause: e, details: { file } });
  }
  const id = await fileIdentity(file);
  const key = id && `${resolveMediaTools(opts).ffprobePath}|${file}|${id}`;
  const known = key ? probed.get(key) : undefined;
  if (known) {
    ctx.logger.debug({ file, format: known.format, duration: known.duration, cached: true }, 'probed');
    return known;
  }
  let text: string;
  try {
    text = await runFfprobe(['-print_format', 'json', '-show_format', '-show_streams', '--', file], opts, ctx);
  } catch (e) {
    if (e instanceof ProcessError) {
      throw new AssetError('unsupported_media', `not a readable media file: ${lastLine(e.stderrTail) || file}`, { cause: e, details: { file } });
    }
    throw e;
  }
  let raw: RawProbe;
  try {
    raw = JSON.parse(text) as RawProbe;
  } catch (e) {
    throw new DubError('internal_error', 'ffprobe printed invalid JSON', { cause: e, retryable: true });
  }
  const info = toMediaInfo(file, size, raw);
  // kept only if the file did not change while ffprobe read it
  if (key && (await fileIdentity(file)) === id) probed.set(key, info);
  ctx.logger.debug({ file, format: info.format, duration: info.duration }, 'probed');
  return info;
}

/** Throw the contract's asset error when `info` is not a video with sound. */
export function assertDubbable(info: MediaInfo): void {
  if (!info.video) throw new AssetError('unsupported_media', `no video stream in ${info.file}`, { details: { file: info.file } });
  if (!(info.duration > 0)) throw new AssetError('unsupported_media', `${info.file} has no duration (a still image?)`, { details: { file: info.file } });
  if (info.audio.length === 0) throw new AssetError('missing_audio_track', `no audio stream in ${info.file}`, { details: { file: info.file } });
}

/** `probe` then `assertDubbable`: the check an uploaded source video goes through. */
export async function probeSource(file: string, opts: ProbeOptions = {}, context: PartialContext = {}): Promise<MediaInfo> {
  const info = await probe(file, opts, context);
  assertDubbable(info);
  return info;
}

function toMediaInfo(file: string, size: number, raw: RawProbe): MediaInfo {
  const streams = raw.streams ?? [];
  const format = raw.format ?? {};
  const videoRaw = streams.find((s) => s.codec_type === 'video' && s.disposition?.attached_pic !== 1);
  const audio: AudioStreamInfo[] = streams
    .filter((s) => s.codec_type === 'audio')
    .map((s) => ({
      index: s.index ?? 0,
      codec: s.codec_name ?? 'unknown',
      channels: s.channels ?? 0,
      sampleRate: num(s.sample_rate) ?? 0,
      channelLayout: s.channel_layout,
      duration: num(s.duration),
      language: s.tags?.language,
    }));
  let video: VideoStreamInfo | undefined;
  if (videoRaw) {
    const rotation = rotationOf(videoRaw);
    const width = videoRaw.width ?? 0;
    const height = videoRaw.height ?? 0;
    const swap = rotation === 90 || rotation === 270;
    video = {
      index: videoRaw.index ?? 0,
      codec: videoRaw.codec_name ?? 'unknown',
      width,
      height,
      fps: rate(videoRaw.avg_frame_rate) || rate(videoRaw.r_frame_rate),
      rotation,
      displayWidth: swap ? height : width,
      displayHeight: swap ? width : height,
      frames: int(videoRaw.nb_frames),
      pixelFormat: videoRaw.pix_fmt,
      duration: num(videoRaw.duration),
    };
  }
  const streamMax = Math.max(0, ...streams.map((s) => num(s.duration) ?? 0));
  return {
    file,
    format: format.format_name ?? 'unknown',
    duration: num(format.duration) ?? streamMax,
    size: num(format.size) ?? size,
    bitRate: num(format.bit_rate),
    video,
    audio,
  };
}

function rotationOf(s: RawStream): number {
  const dm = s.side_data_list?.find((d) => d.side_data_type === 'Display Matrix' && typeof d.rotation === 'number');
  const deg = dm?.rotation ?? num(s.tags?.rotate) ?? 0;
  const r = Math.round(deg / 90) * 90;
  return ((r % 360) + 360) % 360;
}

function num(v: string | number | undefined): number | undefined {
  if (v === undefined || v === 'N/A' || v === '') return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
}

function int(v: string | undefined): number | undefined {
  const n = num(v);
  return n !== undefined && Number.isInteger(n) && n > 0 ? n : undefined;
}

function rate(v: string | undefined): number {
  if (!v) return 0;
  const [a, b] = v.split('/');
  const n = Number(a);
  const d = b === undefined ? 1 : Number(b);
  return Number.isFinite(n) && Number.isFinite(d) && d !== 0 ? n / d : 0;
}

function lastLine(text: string): string {
  const lines = text.split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
  return lines[lines.length - 1] ?? '';
}
