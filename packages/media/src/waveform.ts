/**
 * The level envelope of a media file's audio, for drawing a waveform and finding pauses: ffmpeg
 * decodes the first audio stream to mono 16-bit PCM on a pipe, and every `1/rate` seconds the
 * peak and the RMS level of that window are kept, each as one byte on a dBFS scale. The samples
 * are never held in memory (one pass, constant memory, linear time); a 30-minute video at the
 * default 50 windows per second gives 90,000 windows, 180 KB.
 */
import { Writable } from 'node:stream';
import { AssetError, ProcessError, resolveContext, type PartialContext } from '@dub/core';
import { runFfmpeg } from './ffmpeg.js';
import { probe } from './probe.js';
import { ffSignedTime, streamStarts } from './timing.js';
import { tools, type MediaToolOptions } from './tools.js';

/** The lowest level the byte scale holds; byte 0 is this or quieter (digital silence included). */
export const WAVEFORM_FLOOR_DB = -90;
/** Windows per second unless asked otherwise (20 ms windows). */
export const WAVEFORM_DEFAULT_RATE = 50;
/** Sample rate the audio is decoded at before measuring (speech keeps its energy below 8 kHz). */
export const WAVEFORM_SAMPLE_RATE = 16_000;

export interface Waveform {
  /** Windows per second. */
  rate: number;
  /** Seconds of audio decoded. */
  duration: number;
  /** Per window: the peak |sample| as a level byte (see levelToDb). */
  peak: Uint8Array;
  /** Per window: the RMS as a level byte. */
  rms: Uint8Array;
}

export interface WaveformOptions extends MediaToolOptions {
  /** Windows per second, 1..1000 (default 50). */
  rate?: number;
  /** Which audio stream (0 = the first, the default). */
  audioStream?: number;
  timeoutMs?: number;
}

/** A level byte back to dBFS: 0 is WAVEFORM_FLOOR_DB or below, 255 is 0 dBFS (linear in dB). */
export function levelToDb(level: number): number {
  return WAVEFORM_FLOOR_DB + (level / 255) * -WAVEFORM_FLOOR_DB;
}

/** dBFS to a level byte (anything above the floor gets at least 1, so it stays distinguishable from silence). */
export function dbToLevel(db: number): number {
  if (!(db > WAVEFORM_FLOOR_DB)) return 0;
  if (db >= 0) return 255;
  return Math.max(1, Math.round(((db - WAVEFORM_FLOOR_DB) / -WAVEFORM_FLOOR_DB) * 255));
}

const FULL_SCALE = 32768;

/** Accumulates 16-bit little-endian mono samples into windows. */
export class WaveformBuilder {
  private readonly perWindow: number;
  private readonly peaks: number[] = [];
  private readonly rmss: number[] = [];
  private carry: number | undefined;
  private n = 0;
  private peak = 0;
  private sumSq = 0;
  private samples = 0;

  constructor(
    readonly rate: number,
    readonly sampleRate: number = WAVEFORM_SAMPLE_RATE,
  ) {
    if (!Number.isInteger(rate) || rate < 1 || rate > 1000) throw new RangeError(`waveform rate must be an integer from 1 to 1000, got ${rate}`);
    this.perWindow = sampleRate / rate;
  }

  /** Feed raw s16le bytes (chunks may split a sample). */
  push(chunk: Uint8Array): void {
    let i = 0;
    if (this.carry !== undefined && chunk.length > 0) {
      this.sample(((chunk[0]! << 8) | this.carry) << 16 >> 16);
      this.carry = undefined;
      i = 1;
    }
    for (; i + 1 < chunk.length; i += 2) this.sample(((chunk[i + 1]! << 8) | chunk[i]!) << 16 >> 16);
    if (i < chunk.length) this.carry = chunk[i]!;
  }

  private sample(s: number): void {
    const a = Math.abs(s);
    if (a > this.peak) this.peak = a;
    this.sumSq += s * s;
    this.n++;
    this.samples++;
    // Window boundaries at exact multiples of sampleRate/rate (which need not be an integer).
    if (this.samples >= Math.round((this.peaks.length + 1) * this.perWindow)) this.flush();
  }

  private flush(): void {
    if (this.n === 0) return;
    this.peaks.push(dbToLevel(20 * Math.log10(this.peak / FULL_SCALE)));
    this.rmss.push(dbToLevel(10 * Math.log10(this.sumSq / this.n / (FULL_SCALE * FULL_SCALE))));
    this.n = 0;
    this.peak = 0;
    this.sumSq = 0;
  }

  finish(): Waveform {
    this.flush();
    return { rate: this.rate, duration: this.samples / this.sampleRate, peak: Uint8Array.from(this.peaks), rms: Uint8Array.from(this.rmss) };
  }
}

/**
 * The waveform of `input`'s audio (its first audio stream unless `audioStream`). A file without
 * that audio stream is an AssetError `missing_audio_track`; other ffmpeg failures are its
 * ProcessError.
 */
export async function computeWaveform(input: string, opts: WaveformOptions = {}, context: PartialContext = {}): Promise<Waveform> {
  const ctx = resolveContext(context);
  const builder = new WaveformBuilder(opts.rate ?? WAVEFORM_DEFAULT_RATE);
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      builder.push(chunk);
      done();
    },
  });
  try {
    // on the presentation timeline, as extractAudio: window 0 is the file's origin, an audio stream
    // that starts after the picture is preceded by silence
    const origin = (await streamStarts(input, { ...tools(opts), audioStream: opts.audioStream ?? 0 }, ctx)).origin;
    const filter = `asetpts=PTS-(${ffSignedTime(origin)})/TB,aresample=${WAVEFORM_SAMPLE_RATE}:async=1:first_pts=0`;
    const args = ['-copyts', '-i', input, '-map', `0:a:${opts.audioStream ?? 0}`, '-vn', '-sn', '-dn', '-af', filter, '-ac', '1', '-ar', String(WAVEFORM_SAMPLE_RATE), '-c:a', 'pcm_s16le', '-f', 's16le', 'pipe:1'];
    await runFfmpeg(args, { ...opts, stage: 'waveform', progress: false, stdout: sink }, ctx);
  } catch (e) {
    // Tell a missing audio stream apart from other failures by looking at the input, not the message.
    if (e instanceof ProcessError) {
      const info = await probe(input, opts, ctx);
      if (info.audio.length <= (opts.audioStream ?? 0)) throw new AssetError('missing_audio_track', `no audio stream ${opts.audioStream ?? 0} in ${input}`, { cause: e, details: { file: input } });
    }
    throw e;
  }
  return builder.finish();
}
