/** Options shared by both mixes: public and partial, resolved once into complete ones. */
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ValidationError, type PartialContext } from '@dub/core';
import { resample, WavFormatError, WavReader, type MediaToolOptions } from '@dub/media';
import { STREAMING_LOUDNESS, type LoudnessTarget } from './loudness.js';

export interface MixOutputOptions {
  /** Output WAV. */
  output: string;
  /** Output length in seconds (default: the length of the main input, see each mix). */
  durationSeconds?: number;
  /** Output sample rate (default 48000) and channels (default 2). */
  sampleRate?: number;
  channels?: number;
  /** Output encoding (default pcm16). */
  format?: 'pcm16' | 'float32';
  /** Loudness target (default STREAMING_LOUDNESS: -16 LUFS, -1.5 dBTP). */
  loudness?: Partial<LoudnessTarget>;
  /** Gain of the dubbed speech before mixing, dB (default 0). */
  speechGainDb?: number;
  /**
   * Loudness gain (dB, MixResult.gainDb) of a previous mix of this video: kept when the new exact
   * gain is within `gainToleranceDb` (default 0.5 dB) of it, so that a re-dub of one line changes
   * the mix only near that line.
   */
  previousGainDb?: number;
  gainToleranceDb?: number;
  media?: MediaToolOptions;
  tmpDir?: string;
}

export interface ResolvedMixOutput {
  output: string;
  durationSeconds: number | undefined;
  sampleRate: number;
  channels: number;
  format: 'pcm16' | 'float32';
  loudness: LoudnessTarget;
  speechGainDb: number;
  previousGainDb: number | undefined;
  gainToleranceDb: number | undefined;
  media: MediaToolOptions;
  tmpDir: string;
}

export function resolveMixOutput(o: MixOutputOptions): ResolvedMixOutput {
  const sampleRate = o.sampleRate ?? 48000;
  const channels = o.channels ?? 2;
  if (!Number.isInteger(sampleRate) || sampleRate < 8000 || sampleRate > 192000) throw new ValidationError(`invalid sample rate ${sampleRate}`, { field: 'sampleRate' });
  if (channels !== 1 && channels !== 2) throw new ValidationError(`channels must be 1 or 2, got ${channels}`, { field: 'channels' });
  if (o.durationSeconds !== undefined && !(o.durationSeconds > 0)) throw new ValidationError(`durationSeconds must be positive`, { field: 'durationSeconds' });
  const loudness = { ...STREAMING_LOUDNESS, ...o.loudness };
  if (!(loudness.integrated <= -5 && loudness.integrated >= -70)) throw new ValidationError(`loudness target ${loudness.integrated} LUFS out of range`, { field: 'loudness' });
  if (o.gainToleranceDb !== undefined && !(o.gainToleranceDb >= 0)) throw new ValidationError(`gainToleranceDb must be >= 0`, { field: 'gainToleranceDb' });
  if (o.previousGainDb !== undefined && !Number.isFinite(o.previousGainDb)) throw new ValidationError(`previousGainDb must be a finite number`, { field: 'previousGainDb' });
  return {
    output: o.output,
    durationSeconds: o.durationSeconds,
    sampleRate,
    channels,
    format: o.format ?? 'pcm16',
    loudness,
    speechGainDb: o.speechGainDb ?? 0,
    previousGainDb: o.previousGainDb,
    gainToleranceDb: o.gainToleranceDb,
    media: o.media ?? {},
    tmpDir: o.tmpDir ?? os.tmpdir(),
  };
}

export const dbToGain = (db: number): number => Math.pow(10, db / 20);

/**
 * `file` as an input of the mix at `fmt` (float32 WAV at its rate and channels): the file itself
 * when it is one already (a background converted once and kept by the caller), else converted by
 * ffmpeg into `dest` (what ffmpeg writes for a file already at that format is the file's samples).
 */
export async function mixInput(file: string, fmt: { sampleRate: number; channels: number } & MediaToolOptions, dest: string, context: PartialContext = {}): Promise<string> {
  try {
    const r = await WavReader.open(file);
    const same = r.sampleRate === fmt.sampleRate && r.channelCount === fmt.channels && r.sampleFormat === 'float32';
    await r.close();
    if (same) return file;
  } catch (e) {
    if (!(e instanceof WavFormatError)) throw e;
  }
  await resample(file, dest, { ...fmt, format: 'float32' }, context);
  return dest;
}

/** The format a mix works in: float32 WAV at the output's rate and channels. */
export type MixWorkFormat = MediaToolOptions & { sampleRate: number; channels: number; format: 'float32' };

/** `fn` run with a fresh temporary folder of the mix (removed after, whatever happens) and the work format of `o`. */
export async function inMixDir<T>(o: ResolvedMixOutput, fn: (dir: string, fmt: MixWorkFormat) => Promise<T>): Promise<T> {
  const dir = await fsp.mkdtemp(path.join(o.tmpDir, 'dub-mix-'));
  try {
    return await fn(dir, { ...o.media, sampleRate: o.sampleRate, channels: o.channels, format: 'float32' });
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
  }
}
