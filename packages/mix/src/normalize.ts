/**
 * Two-pass loudness normalisation: the first pass measures (ffmpeg ebur128), the second applies
 * one linear gain to reach the target, then a lookahead limiter under the true-peak ceiling
 * guarantees no clipping. The output has exactly `frames` frames.
 */
import { DubError, resolveContext, type PartialContext } from '@dub/core';
import { runFfmpeg, type MediaToolOptions } from '@dub/media';
import { measureLoudness, type LoudnessTarget } from './loudness.js';

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
  media?: MediaToolOptions;
}

const dbToLinear = (db: number): number => Math.pow(10, db / 20);

/**
 * Margin under the true-peak ceiling at which the sample-peak limiter works: peaks between samples
 * (what true peak measures, 4x oversampled) rise above the sample peaks by a fraction of a dB in
 * speech and music; checked by the tests with ffmpeg's ebur128 true-peak meter.
 */
export const INTER_SAMPLE_MARGIN_DB = 0.5;

/**
 * Normalise `input` into the WAV `output`: ffmpeg's ebur128 meter measures the integrated loudness
 * (BS.1770, at the input's rate), one linear gain brings it to the target, and a lookahead limiter
 * keeps the peaks under the true-peak ceiling. (Measuring with ebur128 instead of loudnorm, which
 * works at 192 kHz in both passes, takes about a tenth of the time: 2 s instead of 21 s for
 * 5 minutes of stereo here.) Returns the measured input loudness (LUFS).
 */
export async function normalizeLoudness(input: string, output: string, o: NormalizeOptions, context: PartialContext = {}): Promise<{ inputIntegrated: number }> {
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
