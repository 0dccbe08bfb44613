/**
 * Two-pass loudness normalisation with ffmpeg's loudnorm: the first pass measures, the second
 * applies one linear gain to reach the target (loudnorm falls back to its dynamic mode only
 * when the gain would push the true peak over the ceiling), then a lookahead limiter at the
 * true-peak ceiling guarantees no clipping. The output has exactly `frames` frames.
 */
import { DubError, resolveContext, type PartialContext } from '@dub/core';
import { runFfmpeg, type MediaToolOptions } from '@dub/media';
import type { LoudnessTarget } from './loudness.js';

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

/** Normalise `input` into the WAV `output`; returns the first pass's measured input loudness (LUFS). */
export async function normalizeLoudness(input: string, output: string, o: NormalizeOptions, context: PartialContext = {}): Promise<{ inputIntegrated: number }> {
  const ctx = resolveContext(context);
  const t = o.target;
  const base = `I=${t.integrated}:TP=${t.truePeak}:LRA=${t.range}`;
  const first = await runFfmpeg(['-nostats', '-i', input, '-af', `loudnorm=${base}:print_format=json`, '-f', 'null', '-'], { ...o.media, stage: 'loudness_measure', logLevel: 'info', progress: false }, ctx);
  const m = parseLoudnormJson(first.stderrTail);
  const inputI = Number(m.input_i);
  // (one aresample only: ffmpeg 5.1 fails to renegotiate a second one after alimiter on inputs without a channel mask)
  const exact = `apad=whole_len=${o.frames},atrim=end_sample=${o.frames}`;
  // Below -70 LUFS (silence: BS.1770's absolute gate) there is nothing to normalise.
  const chain = Number.isFinite(inputI) && inputI > -70
    ? `loudnorm=${base}:measured_I=${m.input_i}:measured_TP=${m.input_tp}:measured_LRA=${m.input_lra}:measured_thresh=${m.input_thresh}:offset=${m.target_offset}:linear=true,` +
      `aresample=${o.sampleRate},alimiter=limit=${dbToLinear(t.truePeak).toFixed(4)}:attack=5:release=50:level=0:latency=1,${exact}`
    : exact;
  const codec = o.format === 'float32' ? 'pcm_f32le' : 'pcm_s16le';
  await runFfmpeg(['-i', input, '-af', chain, '-c:a', codec, '-f', 'wav', output], { ...o.media, stage: 'loudness_normalize', progress: false }, ctx);
  return { inputIntegrated: inputI };
}
