/**
 * Audio out of any media file as WAV: mono 16 kHz for speech models, stereo 44.1 kHz for
 * separation, pcm16 or float32; optionally only [start, end). Also `resample` of a WAV.
 *
 * Times are on the input's presentation timeline (timing.ts): sample 0 of the WAV is the
 * presentation origin (+ `start`), not the audio stream's first sample, so an audio stream that
 * starts after the picture is preceded by silence and every sound keeps its place against the
 * picture; samples before the origin (encoder priming, pre-skip) are dropped by the decoder.
 */
import { AssetError, ProcessError, resolveContext, type PartialContext } from '@dub/core';
import { runFfmpeg } from './ffmpeg.js';
import { probe } from './probe.js';
import { ffTime } from './seconds.js';
import { ffSignedTime, streamStarts } from './timing.js';
import { tools, type MediaToolOptions } from './tools.js';
import { WavReader } from './wav-reader.js';

export interface ExtractAudioOptions extends MediaToolOptions {
  sampleRate: number;
  channels: number;
  /** Default pcm16. */
  format?: 'pcm16' | 'float32';
  /** Seconds from the beginning, the input's presentation origin (default 0). */
  start?: number;
  /** Seconds from the beginning, exclusive (default the end of the input). */
  end?: number;
  /** Which audio stream (0 = the first audio stream, the default). */
  audioStream?: number;
  timeoutMs?: number;
}

export interface WavFileInfo {
  file: string;
  sampleRate: number;
  channels: number;
  frames: number;
  /** Seconds. */
  duration: number;
}

export interface ResampleOptions extends MediaToolOptions {
  sampleRate: number;
  /** Default: keep the input's channel count. */
  channels?: number;
  /** Default pcm16. */
  format?: 'pcm16' | 'float32';
  timeoutMs?: number;
}

/** Extract (and convert) an audio stream of `input` into the WAV `output`. */
export async function extractAudio(input: string, output: string, opts: ExtractAudioOptions, context: PartialContext = {}): Promise<WavFileInfo> {
  const ctx = resolveContext(context);
  checkRate(opts.sampleRate, opts.channels);
  const start = opts.start ?? 0;
  if (!(start >= 0) || (opts.end !== undefined && !(opts.end > start))) {
    throw new AssetError('invalid_input', `invalid audio window [${start}, ${opts.end ?? 'end'})`);
  }
  let durationSec = opts.end !== undefined ? opts.end - start : undefined;
  if (durationSec === undefined && ctx.onProgress) durationSec = Math.max(0, (await probe(input, opts, ctx)).duration - start);
  // Sample 0 is the origin + start: timestamps kept (-copyts), shifted to it, the head padded with
  // silence where the audio starts later (aresample first_pts) and gaps filled (async).
  const args: string[] = ['-copyts'];
  const filters: string[] = [];
  try {
    const starts = await streamStarts(input, { ...tools(opts), audioStream: opts.audioStream ?? 0 }, ctx);
    const at = starts.origin + start;
    const seek = at - starts.formatStart;
    if (seek > 0) args.push('-ss', ffTime(seek));
    // read a little past the end (the reading counts from the container's start); atrim cuts exactly
    if (opts.end !== undefined) args.push('-t', ffTime(opts.end - start + Math.max(0, -seek) + 1));
    filters.push(`asetpts=PTS-(${ffSignedTime(at)})/TB`, `aresample=${opts.sampleRate}:async=1:first_pts=0`);
  } catch (e) {
    // a file ffprobe cannot read: probe's asset error says why
    if (e instanceof ProcessError) await probe(input, opts, ctx);
    throw e;
  }
  args.push('-i', input, '-map', `0:a:${opts.audioStream ?? 0}`, '-vn', '-sn', '-dn');
  if (opts.end !== undefined) filters.push(`atrim=end_sample=${Math.round((opts.end - start) * opts.sampleRate)}`);
  args.push('-af', filters.join(','), '-ac', String(opts.channels), '-ar', String(opts.sampleRate), '-c:a', codecOf(opts.format), '-f', 'wav', output);
  try {
    await runFfmpeg(args, { ...opts, stage: 'extract_audio', ...(durationSec !== undefined ? { durationSec } : {}) }, ctx);
  } catch (e) {
    // Tell a missing audio stream apart from other failures by looking at the input, not the message.
    if (e instanceof ProcessError) {
      const info = await probe(input, opts, ctx);
      if (info.audio.length <= (opts.audioStream ?? 0)) {
        throw new AssetError('missing_audio_track', `no audio stream ${opts.audioStream ?? 0} in ${input}`, { cause: e, details: { file: input } });
      }
    }
    throw e;
  }
  return wavInfo(output);
}

/**
 * Convert a WAV (or any audio file) to another sample rate / channel count / encoding. Like
 * `extractAudio`, sample 0 is the input's presentation origin: a video whose audio starts after
 * its picture (the voice-over mix reads the source video's audio this way) gets silence first.
 */
export async function resample(input: string, output: string, opts: ResampleOptions, context: PartialContext = {}): Promise<WavFileInfo> {
  const ctx = resolveContext(context);
  checkRate(opts.sampleRate, opts.channels ?? 1);
  const origin = (await streamStarts(input, tools(opts), ctx)).origin;
  const args = ['-copyts', '-i', input, '-map', '0:a:0', '-vn', '-af', `asetpts=PTS-(${ffSignedTime(origin)})/TB,aresample=${opts.sampleRate}:async=1:first_pts=0`];
  if (opts.channels !== undefined) args.push('-ac', String(opts.channels));
  args.push('-ar', String(opts.sampleRate), '-c:a', codecOf(opts.format), '-f', 'wav', output);
  await runFfmpeg(args, { ...opts, stage: 'resample' }, ctx);
  return wavInfo(output);
}

/** Header facts of a WAV file. */
export async function wavInfo(file: string): Promise<WavFileInfo> {
  const r = await WavReader.open(file);
  try {
    return { file, sampleRate: r.sampleRate, channels: r.channelCount, frames: r.frames, duration: r.duration };
  } finally {
    await r.close();
  }
}

function codecOf(format: 'pcm16' | 'float32' | undefined): string {
  return format === 'float32' ? 'pcm_f32le' : 'pcm_s16le';
}

function checkRate(sampleRate: number, channels: number): void {
  if (!Number.isInteger(sampleRate) || sampleRate < 1000 || sampleRate > 384000) throw new RangeError(`invalid sample rate ${sampleRate}`);
  if (!Number.isInteger(channels) || channels < 1 || channels > 8) throw new RangeError(`invalid channel count ${channels}`);
}
