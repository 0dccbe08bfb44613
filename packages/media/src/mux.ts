/**
 * Put new audio tracks next to a video: the video stream is copied when unchanged (-c:v copy),
 * audio is encoded to AAC, `+faststart` for MP4/MOV. By default the output lasts as long as the
 * video: shorter audio is padded with silence, longer audio is cut. `length: 'shortest'` ends
 * the output with the shortest stream instead (ffmpeg -shortest).
 *
 * Timing: the video's timestamps are kept as they are (its first frame keeps its presentation
 * time, every frame is kept, no empty edit is added), and the audio tracks' time 0 is the video
 * file's time 0 (the dubbing timeline's origin: timing.ts); with `audioStart` they begin there.
 */
import path from 'node:path';
import { DubError, resolveContext, type PartialContext } from '@dub/core';
import { faststartArgs } from './container.js';
import { runFfmpeg } from './ffmpeg.js';
import { probe } from './probe.js';
import { ffTime } from './seconds.js';
import { streamStarts } from './timing.js';
import { tools, type MediaToolOptions } from './tools.js';

export interface MuxAudioTrack {
  file: string;
  /** Stream language tag (ISO 639-2, e.g. "spa"). */
  language?: string;
  /** Track name (Matroska title; MP4 handler name). */
  title?: string;
}

export interface MuxOptions extends MediaToolOptions {
  video: string;
  audioTracks: MuxAudioTrack[];
  output: string;
  /** Copy the video stream (default true); false re-encodes it with libx264. */
  copyVideo?: boolean;
  /**
   * 'video' (default): the audio is padded or cut to the video stream's duration, or to
   * `durationSeconds` when given (e.g. the source container's duration, which may be longer than
   * its video stream: the video keeps every frame and the audio lasts that long); 'shortest': stop
   * at the shortest stream.
   */
  length?: 'video' | 'shortest';
  /** Length of the audio tracks in seconds (with length 'video'); never shorter than the video stream. */
  durationSeconds?: number;
  /** AAC bit rate per track (default "192k"). */
  audioBitrate?: string;
  /**
   * The audio tracks are already encoded (AAC, e.g. the dubbed .m4a) and exactly as long as the
   * output should be: their streams are copied, not encoded again (no padding either).
   */
  copyAudio?: boolean;
  /**
   * Where the audio tracks begin on the video's timeline (seconds, default 0): what comes before is
   * left out, as when the source's audio started after its picture. Copied AAC is cut at a packet,
   * so it begins less than one AAC frame (1024 samples) later.
   */
  audioStart?: number;
  /** x264 CRF when the video is re-encoded (default 18). */
  crf?: number;
  timeoutMs?: number;
}

export async function mux(opts: MuxOptions, context: PartialContext = {}): Promise<{ file: string }> {
  const ctx = resolveContext(context);
  if (opts.audioTracks.length === 0) throw new DubError('invalid_input', 'mux needs at least one audio track');
  const info = await probe(opts.video, opts, ctx);
  if (!info.video) throw new DubError('invalid_input', `mux: no video stream in ${opts.video}`);
  const videoDuration = info.video.duration ?? info.duration;
  // Where the video starts in its own timestamps (kept by -copyts): its end on the timeline.
  const videoStart = Math.max(0, (await streamStarts(opts.video, { ...tools(opts), only: 'video' }, ctx)).video ?? 0);
  const end = Math.max(opts.durationSeconds ?? 0, videoStart + videoDuration);
  const audioStart = Math.max(0, opts.audioStart ?? 0);
  if (!(audioStart < end)) throw new DubError('invalid_input', `mux: the audio would start at ${audioStart} s, after the end (${end} s)`);
  const args = ['-copyts', '-i', opts.video];
  for (const t of opts.audioTracks) args.push('-i', t.file);
  args.push('-map', '0:v:0');
  opts.audioTracks.forEach((_, i) => args.push('-map', `${i + 1}:a:0`));
  if (opts.copyVideo === false) args.push('-c:v', 'libx264', '-preset', 'veryfast', '-crf', String(opts.crf ?? 18), '-fps_mode', 'passthrough');
  else args.push('-c:v', 'copy');
  if (opts.copyAudio) {
    args.push('-c:a', 'copy');
    // whole packets: those that start at audioStart or later
    if (audioStart > 0) args.push('-bsf:a', `noise=drop=lt(pts*tb\\,${audioStart.toFixed(6)})`);
  } else {
    args.push('-c:a', 'aac', '-b:a', opts.audioBitrate ?? '192k');
    const filters: string[] = [];
    if (audioStart > 0) filters.push(`atrim=start=${audioStart.toFixed(6)}`);
    // the audio's end on the timeline (its timestamps are the timeline's: -copyts)
    if ((opts.length ?? 'video') === 'video') filters.push('apad', `atrim=end=${end.toFixed(6)}`);
    if (filters.length) args.push('-af', filters.join(','));
  }
  opts.audioTracks.forEach((t, i) => {
    if (t.language) args.push(`-metadata:s:a:${i}`, `language=${t.language}`);
    // MP4 keeps a track's name in its handler name; Matroska in the title tag.
    if (t.title) args.push(`-metadata:s:a:${i}`, `title=${t.title}`, `-metadata:s:a:${i}`, `handler_name=${t.title}`);
    args.push(`-disposition:a:${i}`, i === 0 ? 'default' : '0');
  });
  if (opts.length === 'shortest') args.push('-shortest');
  args.push('-map_metadata', '0', ...faststartArgs(opts.output), opts.output);
  await runFfmpeg(args, { ...opts, stage: 'mux', durationSec: end }, ctx);
  return { file: opts.output };
}

export interface EncodeAudioOptions extends MediaToolOptions {
  /** Bit rate for lossy codecs (default "192k"). */
  bitrate?: string;
  timeoutMs?: number;
}

const CODEC_BY_EXT: Record<string, string[]> = {
  '.m4a': ['-c:a', 'aac'],
  '.aac': ['-c:a', 'aac'],
  '.mp4': ['-c:a', 'aac'],
  '.mp3': ['-c:a', 'libmp3lame'],
  '.ogg': ['-c:a', 'libopus'],
  '.opus': ['-c:a', 'libopus'],
  '.flac': ['-c:a', 'flac'],
  '.wav': ['-c:a', 'pcm_s16le'],
};
const LOSSLESS = new Set(['.flac', '.wav']);

/** Encode a WAV (or any audio) into the format the output's extension names (m4a, mp3, ogg, opus, flac, wav). */
export async function encodeAudio(input: string, output: string, opts: EncodeAudioOptions = {}, context: PartialContext = {}): Promise<{ file: string }> {
  const ctx = resolveContext(context);
  const ext = path.extname(output).toLowerCase();
  const codec = CODEC_BY_EXT[ext];
  if (!codec) throw new DubError('invalid_input', `encodeAudio: unknown audio extension "${ext}"`);
  const args = ['-i', input, '-map', '0:a:0', '-vn', ...codec];
  if (!LOSSLESS.has(ext)) args.push('-b:a', opts.bitrate ?? '192k');
  args.push(...faststartArgs(output), output);
  await runFfmpeg(args, { ...opts, stage: 'encode_audio' }, ctx);
  return { file: output };
}
