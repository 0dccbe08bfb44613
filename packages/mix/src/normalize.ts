/**
 * Two-pass loudness normalisation in JavaScript: the first pass measures the integrated loudness
 * (BS.1770, bs1770.ts), the second applies one linear gain to reach the target, then a lookahead
 * limiter with finite memory (limiter.ts) under the true-peak ceiling guarantees no clipping.
 * Deterministic (no dither, the same input gives the same bytes) and local: with the same gain,
 * a change of the input changes the output only within 2H (40 ms) plus 16 frames of it. The
 * output has exactly `frames` frames.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import { DubError, reportProgress, resolveContext, subContext, type PartialContext } from '@dub/core';
import { resample, runFfmpeg, WavFormatError, WavReader, WavWriter, type MediaToolOptions } from '@dub/media';
import { measureLoudness, type LoudnessTarget } from './loudness.js';
import { ABSOLUTE_GATE_LUFS, measureWavBs1770 } from './bs1770.js';
import { limiterHoldFrames, PeakLimiter } from './limiter.js';

export interface LoudnormMeasurement {
  input_i: string;
  input_tp: string;
  input_lra: string;
  input_thresh: string;
  target_offset: string;
}

/** The JSON block loudnorm prints (print_format=json) at the end of its log. */
export function parseLoudnormJson(log: string): LoudnormMeasurement {
  const start = log.lastIndexOf('{');
  const end = log.lastIndexOf('}');
  if (start < 0 || end < start) throw new DubError('process_failed', 'ffmpeg loudnorm printed no measurement');
  const m = JSON.parse(log.slice(start, end + 1)) as Partial<LoudnormMeasurement>;
  for (const k of ['input_i', 'input_tp', 'input_lra', 'input_thresh', 'target_offset'] as const) {
    if (typeof m[k] !== 'string') throw new DubError('process_failed', `loudnorm measurement lacks ${k}`);
  }
  return m as LoudnormMeasurement;
}

export interface NormalizeOptions {
  target: LoudnessTarget;
  sampleRate: number;
  channels: number;
  /** Exact output length in frames. */
  frames: number;
  /** Output sample encoding (default pcm16). */
  format?: 'pcm16' | 'float32';
  /**
   * Gain (dB) of a previous normalisation of this mix: kept when the exact gain is within
   * `gainToleranceDb` of it, so that re-dubbing one line does not change every sample of the mix.
   */
  previousGainDb?: number;
  /** Default DEFAULT_GAIN_TOLERANCE_DB. */
  gainToleranceDb?: number;
  media?: MediaToolOptions;
}

export interface NormalizeResult {
  /** Integrated loudness of the input (BS.1770), LUFS; -Infinity for silence. */
  inputIntegrated: number;
  /** Gain applied before the limiter, dB, in steps of GAIN_STEP_DB (so it can be stored and given back as previousGainDb exactly). */
  gainDb: number;
  /** Gain that brings the input exactly to the target, dB (0 for silence). */
  exactGainDb: number;
  /** True when `previousGainDb` was applied instead of the exact gain. */
  gainKept: boolean;
  /** K-weighted energy of the input per 100 ms hop (what updateMixReplace starts from next time). */
  hops?: Float64Array;
}

/** Largest difference (dB) between the exact gain and a previous one that keeps the previous one. */
export const DEFAULT_GAIN_TOLERANCE_DB = 0.5;

const dbToLinear = (db: number): number => Math.pow(10, db / 20);

/**
 * Margin under the true-peak ceiling at which the sample-peak limiter works: peaks between samples
 * (what true peak measures, 4x oversampled) rise above the sample peaks by a fraction of a dB in
 * speech and music; checked by the tests with ffmpeg's ebur128 true-peak meter.
 */
export const INTER_SAMPLE_MARGIN_DB = 0.5;

/** Frames of output the limiter produces per chunk (it reads its reach more on each side). */
const CHUNK_FRAMES = 1 << 17;

/** The applied gain's step (dB): the exact gain rounded to it is within 0.005 dB of the target. */
export const GAIN_STEP_DB = 0.01;

const toStep = (db: number): number => Math.round(db / GAIN_STEP_DB) / Math.round(1 / GAIN_STEP_DB);

/** The gain to apply: the exact one (to GAIN_STEP_DB), or the previous one when it is close enough. */
export function chooseGain(inputIntegrated: number, target: number, previousGainDb?: number, toleranceDb = DEFAULT_GAIN_TOLERANCE_DB): Omit<NormalizeResult, 'inputIntegrated'> {
  // Below -70 LUFS (silence: BS.1770's absolute gate) there is nothing to normalise.
  if (!(Number.isFinite(inputIntegrated) && inputIntegrated > ABSOLUTE_GATE_LUFS)) return { gainDb: 0, exactGainDb: 0, gainKept: false };
  const exactGainDb = target - inputIntegrated;
  if (previousGainDb !== undefined && Number.isFinite(previousGainDb) && Math.abs(exactGainDb - previousGainDb) <= toleranceDb) {
    return { gainDb: toStep(previousGainDb), exactGainDb, gainKept: true };
  }
  return { gainDb: toStep(exactGainDb), exactGainDb, gainKept: false };
}

/** Open `input` as a WAV at the rate and channel count asked, converting it with ffmpeg when it is not one. */
async function openInput(input: string, o: NormalizeOptions, dir: () => Promise<string>, ctx: PartialContext): Promise<WavReader> {
  try {
    const r = await WavReader.open(input);
    if (r.sampleRate === o.sampleRate && r.channelCount === o.channels) return r;
    await r.close();
  } catch (e) {
    if (!(e instanceof WavFormatError)) throw e;
  }
  const converted = path.join(await dir(), 'input.wav');
  await resample(input, converted, { ...o.media, sampleRate: o.sampleRate, channels: o.channels, format: 'float32' }, ctx);
  return WavReader.open(converted);
}

/**
 * Normalise `input` into the WAV `output`: the BS.1770 integrated loudness of its first `frames`
 * frames (JavaScript, bs1770.ts), one linear gain to the target (or `previousGainDb` when within
 * the tolerance), the finite-memory lookahead limiter at the true-peak ceiling less
 * INTER_SAMPLE_MARGIN_DB, zero padding or truncation to exactly `frames`, pcm16 (rounded, no
 * dither) or float32. `input` is read as is when it is a WAV at `sampleRate` with `channels`,
 * else converted by ffmpeg first.
 */
export async function normalizeLoudness(input: string, output: string, o: NormalizeOptions, context: PartialContext = {}): Promise<NormalizeResult> {
  const ctx = resolveContext(context);
  if (!Number.isInteger(o.frames) || o.frames < 0) throw new RangeError(`frames must be a non-negative integer, got ${o.frames}`);
  let tmp: string | undefined;
  const dir = async (): Promise<string> => (tmp ??= await fsp.mkdtemp(path.join(path.dirname(output), '.dub-normalize-')));
  try {
    const reader = await openInput(input, o, dir, subContext(ctx, 'loudness_normalize', 0, 0.2));
    try {
      const signalFrames = Math.min(o.frames, reader.frames);
      const m = await measureWavBs1770(reader, signalFrames);
      reportProgress(ctx, 'loudness_normalize', 0.5);
      const gain = chooseGain(m.integrated, o.target.integrated, o.previousGainDb, o.gainToleranceDb);
      const limiter = new PeakLimiter(o.channels, { gain: dbToLinear(gain.gainDb), ceiling: dbToLinear(o.target.truePeak - INTER_SAMPLE_MARGIN_DB), hold: limiterHoldFrames(o.sampleRate) });
      const reach = limiter.reach;
      const writer = await WavWriter.create(output, { sampleRate: o.sampleRate, channels: o.channels, format: o.format === 'float32' ? 'float32' : 'pcm16' });
      try {
        const out = Array.from({ length: o.channels }, () => new Float32Array(CHUNK_FRAMES));
        // the input of a chunk: its frames and `reach` frames on each side, clipped to the signal
        const readChunk = async (from: number): Promise<{ start: number; channels: Float32Array[] }> => {
          const start = Math.max(0, from - reach);
          const end = Math.min(signalFrames, Math.min(o.frames, from + CHUNK_FRAMES) + reach);
          return { start, channels: end > start ? await reader.read(start, end - start) : Array.from({ length: o.channels }, () => new Float32Array(0)) };
        };
        let next = readChunk(0);
        for (let from = 0; from < o.frames; from += CHUNK_FRAMES) {
          const to = Math.min(o.frames, from + CHUNK_FRAMES);
          const chunk = await next;
          if (to < o.frames) {
            next = readChunk(to); // read ahead while this chunk is limited and written
            next.catch(() => undefined); // a failure is thrown by the await above, on the next turn
          }
          const y = limiter.process(chunk.channels, chunk.start, signalFrames, from, to, out.map((c) => c.subarray(0, to - from)));
          await writer.write(y); // encoded before it returns: `out` is free again
          reportProgress(ctx, 'loudness_normalize', 0.5 + (0.5 * to) / o.frames);
        }
      } finally {
        await writer.close();
      }
      return { inputIntegrated: m.integrated, ...gain, ...(m.hops ? { hops: m.hops } : {}) };
    } finally {
      await reader.close();
    }
  } finally {
    if (tmp) await fsp.rm(tmp, { recursive: true, force: true });
  }
}

/**
 * The previous normalisation, all in ffmpeg (kept as the reference of bench/mix.mjs): ffmpeg's
 * ebur128 meter measures the integrated loudness (BS.1770, at the input's rate), one linear gain
 * brings it to the target, and ffmpeg's alimiter (an IIR release: a change anywhere reaches the
 * rest of the file) keeps the peaks under the true-peak ceiling. (Measuring with ebur128 instead of loudnorm, which
 * works at 192 kHz in both passes, takes about a tenth of the time: 2 s instead of 21 s for
 * 5 minutes of stereo here.) Returns the measured input loudness (LUFS).
 */
export async function normalizeLoudnessFfmpeg(input: string, output: string, o: Omit<NormalizeOptions, 'previousGainDb' | 'gainToleranceDb'>, context: PartialContext = {}): Promise<{ inputIntegrated: number }> {
  const ctx = resolveContext(context);
  const t = o.target;
  const m = await measureLoudness(input, o.media ?? {}, ctx);
  const inputI = m.integrated;
  const exact = `apad=whole_len=${o.frames},atrim=end_sample=${o.frames}`;
  // Below -70 LUFS (silence: BS.1770's absolute gate) there is nothing to normalise.
  const chain = Number.isFinite(inputI) && inputI > -70
    ? `volume=${(t.integrated - inputI).toFixed(2)}dB,aresample=${o.sampleRate},alimiter=limit=${dbToLinear(t.truePeak - INTER_SAMPLE_MARGIN_DB).toFixed(4)}:attack=5:release=50:level=0:latency=1,${exact}`
    : exact;
  const codec = o.format === 'float32' ? 'pcm_f32le' : 'pcm_s16le';
  await runFfmpeg(['-i', input, '-af', chain, '-c:a', codec, '-f', 'wav', output], { ...o.media, stage: 'loudness_normalize', progress: false }, ctx);
  return { inputIntegrated: inputI };
}
