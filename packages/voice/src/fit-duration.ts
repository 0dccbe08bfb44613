/**
 * Duration fitting: make a synthesized line last its segment's slot. Leading and trailing
 * silence is trimmed; an engine with rate control re-synthesizes at the speed the length asks
 * for; the remainder is time-stretched (pitch kept) within [minTempo, maxTempo]. Longer speech
 * than the fastest tempo allows runs on into the following silence (`overrunSeconds`); if even
 * that is not enough it stays compressed to maxTempo and `exceeded` says so. Shorter speech
 * than the slowest tempo allows is padded with silence at the end.
 */
import { resolveContext, type PartialContext, type StageContext } from '@dub/core';
import type { MediaToolOptions, PlanarAudio } from '@dub/media';
import { toMono } from './analysis/voice-profile.js';
import { trimSilence } from './analysis/activity.js';
import { detectStretchers, timeStretch, type Stretcher } from './stretch.js';
import { ValidationError } from '@dub/core';
import { INVERSE_SPEED, type SpeedResponse } from './speed-response.js';

export interface FitDurationOptions {
  /** Seconds of silence after the slot that the speech may run into (default 0). */
  overrunSeconds?: number;
  /** Slowest tempo (default 0.7: at most 1/0.7 = 1.43 times longer). */
  minTempo?: number;
  /** Fastest tempo (default 1.5: at least 1/1.5 = 0.67 times as long). */
  maxTempo?: number;
  /** Tempos within this fraction of 1 are left alone (default 0.005). */
  tolerance?: number;
  /**
   * Re-synthesize the same text `speed` times as fast (engines with rate control); called at most
   * once, before time-stretching, when the length is off by more than `resynthesizeAbove`.
   */
  resynthesize?: (speed: number) => Promise<PlanarAudio>;
  /** Relative length error that triggers re-synthesis (default 0.05). */
  resynthesizeAbove?: number;
  /** Bounds of the re-synthesis speed (default 0.6..1.8). */
  minSpeed?: number;
  maxSpeed?: number;
  /** How the engine's length answers its speed (default INVERSE_SPEED: 1/speed); the re-synthesis speed for a wanted length is read from it. */
  response?: SpeedResponse;
  /** Stretch engine; default: rubberband when ffmpeg has it, else atempo. */
  stretcher?: Stretcher;
  media?: MediaToolOptions;
  tmpDir?: string;
}

interface ResolvedFitOptions {
  overrunSeconds: number;
  minTempo: number;
  maxTempo: number;
  tolerance: number;
  resynthesize: ((speed: number) => Promise<PlanarAudio>) | undefined;
  resynthesizeAbove: number;
  minSpeed: number;
  maxSpeed: number;
  response: SpeedResponse;
  stretcher: Stretcher | undefined;
  media: MediaToolOptions;
  tmpDir: string | undefined;
}

export function resolveFitOptions(o: FitDurationOptions = {}): ResolvedFitOptions {
  const r: ResolvedFitOptions = {
    overrunSeconds: Math.max(0, o.overrunSeconds ?? 0),
    minTempo: o.minTempo ?? 0.7,
    maxTempo: o.maxTempo ?? 1.5,
    tolerance: o.tolerance ?? 0.005,
    resynthesize: o.resynthesize,
    resynthesizeAbove: o.resynthesizeAbove ?? 0.05,
    minSpeed: o.minSpeed ?? 0.6,
    maxSpeed: o.maxSpeed ?? 1.8,
    response: o.response ?? INVERSE_SPEED,
    stretcher: o.stretcher,
    media: o.media ?? {},
    tmpDir: o.tmpDir,
  };
  if (!(r.minTempo > 0 && r.minTempo <= 1 && r.maxTempo >= 1)) throw new ValidationError(`invalid tempo bounds ${r.minTempo}..${r.maxTempo}`);
  return r;
}

export interface FitResult {
  /** Mono audio: exactly the target length, longer by `overrunSeconds`, never shorter. */
  audio: PlanarAudio;
  /** Seconds of speech (silence trimmed) as first synthesized. */
  sourceSeconds: number;
  /** Re-synthesis speed used (1 = none). */
  speed: number;
  /** Time-stretch tempo applied after re-synthesis (1 = none). */
  tempo: number;
  /** Length of `audio` in seconds. */
  durationSeconds: number;
  /** Seconds beyond the target. */
  overrunSeconds: number;
  /** Seconds of silence padded at the end (speech shorter than the slowest tempo allows). */
  paddedSeconds: number;
  /** The speech is longer than the target plus the allowed overrun, even at maxTempo. */
  exceeded: boolean;
}

function exactLength(x: Float32Array, frames: number): Float32Array {
  if (x.length === frames) return x;
  const out = new Float32Array(frames);
  out.set(x.subarray(0, Math.min(frames, x.length)));
  return out;
}

/** A line with no speech: `frames` of silence, nothing sped or stretched. */
function silentFit(sr: number, frames: number, sourceSeconds: number): FitResult {
  return { audio: { sampleRate: sr, channels: [new Float32Array(frames)] }, sourceSeconds, speed: 1, tempo: 1, durationSeconds: frames / sr, overrunSeconds: 0, paddedSeconds: frames / sr, exceeded: false };
}

/** Fit `audio` (any channel count; mixed to mono) to `targetSeconds`. */
export async function fitDuration(audio: PlanarAudio, targetSeconds: number, options: FitDurationOptions = {}, context: PartialContext = {}): Promise<FitResult> {
  if (!(targetSeconds > 0)) throw new ValidationError(`target duration must be positive, got ${targetSeconds}`);
  const o = resolveFitOptions(options);
  const ctx: StageContext = resolveContext(context);
  const sr = audio.sampleRate;
  const targetFrames = Math.round(targetSeconds * sr);
  let speech = trimSilence(toMono(audio), sr);
  const sourceSeconds = speech.length / sr;
  if (speech.length === 0) return silentFit(sr, targetFrames, sourceSeconds);

  let speed = 1;
  const bounded = speedFor(sourceSeconds / targetSeconds, o);
  if (o.resynthesize && Math.abs(bounded - 1) > o.resynthesizeAbove) speed = bounded;
  if (o.resynthesize && speed !== 1) {
    const again = await o.resynthesize(speed);
    if (again.sampleRate !== sr) throw new ValidationError(`re-synthesis changed the sample rate (${sr} -> ${again.sampleRate})`);
    const trimmed = trimSilence(toMono(again), sr);
    if (trimmed.length > 0) speech = trimmed;
    else speed = 1;
  }

  return stretchTo(speech, sr, targetSeconds, { sourceSeconds, speed }, o, ctx);
}

/**
 * The speed that brings a line `ratio` times its target's length (at speed 1) to it, by the
 * engine's response, within the speed bounds (a minSpeed above 1 re-synthesizes a line that needs no more speed).
 */
function speedFor(ratio: number, o: ResolvedFitOptions): number {
  return Math.min(o.maxSpeed, Math.max(o.minSpeed, o.response.speedFor(1 / ratio)));
}

/**
 * How far fitPredicted's first pass may miss before the line is spoken again (relative speed):
 * Kokoro's length is not inversely proportional to its speed (own Spanish lines, speed 0.8..1.2:
 * up to 9 % off 1/speed), so fitDuration's re-synthesis at the speed the measured length asks
 * for leaves up to about 9 % to the stretch too; a first pass within 10 % is stretched like that.
 */
export const PREDICTED_MISS = 0.1;

export interface PredictedFitResult extends FitResult {
  /** Times the line was spoken: 1, or 2 when the first missed its target by more than `missAbove` (a correction pass). */
  passes: number;
  /** The speed of the first pass, chosen from the predicted length. */
  firstSpeed: number;
  /** `sourceSeconds` is the line's measured length at speed 1 (a pass at speed 1), else the prediction. */
  natural: 'measured' | 'predicted';
}

/**
 * Fit a line not yet spoken to `targetSeconds` from its predicted length at speed 1: it is spoken
 * once at the speed the prediction asks for (the speed fitDuration would re-synthesize at, 1 when
 * within `resynthesizeAbove`); when that misses the target by more than `missAbove` (default
 * PREDICTED_MISS: its length is that far off the target, and the speed its real length asks
 * for, by the engine's response (`response`; 1/speed by default), within the bounds, is another) it is spoken again at that speed; the rest
 * is time-stretched as in fitDuration. `speak` is the engine at a speed.
 */
export async function fitPredicted(
  predictedSeconds: number,
  targetSeconds: number,
  speak: (speed: number) => Promise<PlanarAudio>,
  options: Omit<FitDurationOptions, 'resynthesize'> & { missAbove?: number } = {},
  context: PartialContext = {},
): Promise<PredictedFitResult> {
  if (!(targetSeconds > 0)) throw new ValidationError(`target duration must be positive, got ${targetSeconds}`);
  if (!(predictedSeconds > 0)) throw new ValidationError(`predicted duration must be positive, got ${predictedSeconds}`);
  const o = resolveFitOptions(options);
  const ctx: StageContext = resolveContext(context);
  const asked = speedFor(predictedSeconds / targetSeconds, o);
  const first = Math.abs(asked - 1) > o.resynthesizeAbove ? asked : 1;
  const a = await speak(first);
  const sr = a.sampleRate;
  let speech = trimSilence(toMono(a), sr);
  const firstSeconds = speech.length / sr;
  let speed = first;
  let passes = 1;
  if (speech.length > 0) {
    // the speed that would have reached the target: the length at speed 1 that the first pass
    // measured (by the engine's response), then the speed for it
    const again = speedFor(speech.length / sr / o.response.lengthRatio(first) / targetSeconds, o);
    // a miss is counted in length (what is left to the stretch), not in speed: by Kokoro's
    // response a 10 % speed difference is up to ~18 % of length; a line already at its bound is not spoken again
    if (Math.abs(firstSeconds / targetSeconds - 1) > (options.missAbove ?? PREDICTED_MISS) && Math.abs(again / first - 1) > 1e-3) {
      const b = await speak(again);
      if (b.sampleRate !== sr) throw new ValidationError(`re-synthesis changed the sample rate (${sr} -> ${b.sampleRate})`);
      const trimmed = trimSilence(toMono(b), sr);
      passes = 2;
      if (trimmed.length > 0) {
        speech = trimmed;
        speed = again;
      }
    }
  }
  const measured = first === 1 ? firstSeconds : speed === 1 ? speech.length / sr : undefined;
  const sourceSeconds = measured ?? predictedSeconds;
  const natural = measured !== undefined ? 'measured' : 'predicted';
  if (speech.length === 0) return { ...silentFit(sr, Math.round(targetSeconds * sr), sourceSeconds), passes, firstSpeed: first, natural };
  return { ...(await stretchTo(speech, sr, targetSeconds, { sourceSeconds, speed }, o, ctx)), passes, firstSpeed: first, natural };
}

/** Stretch `speech` (trimmed, mono) to `targetSeconds` within the tempo bounds; pad it when shorter than the slowest tempo allows. */
async function stretchTo(speech: Float32Array, sr: number, targetSeconds: number, spoken: { sourceSeconds: number; speed: number }, o: ResolvedFitOptions, ctx: StageContext): Promise<FitResult> {
  const { sourceSeconds, speed } = spoken;
  const targetFrames = Math.round(targetSeconds * sr);
  const cur = speech.length / sr;
  const wanted = cur / targetSeconds;
  let tempo = Math.min(o.maxTempo, Math.max(o.minTempo, wanted));
  if (Math.abs(tempo - 1) <= o.tolerance) tempo = 1;
  let out = speech;
  if (tempo !== 1) {
    const stretcher = o.stretcher ?? (await detectStretchers(o.media, ctx))[0] ?? 'atempo';
    out = (await timeStretch({ sampleRate: sr, channels: [speech] }, tempo, { stretcher, media: o.media, ...(o.tmpDir ? { tmpDir: o.tmpDir } : {}) }, ctx)).channels[0]!;
  }
  // Length: the target when the stretch could reach it; otherwise what the bounded tempo gives.
  const naturalFrames = Math.round((cur / tempo) * sr);
  const frames = Math.max(targetFrames, naturalFrames);
  const result = exactLength(out, frames);
  const durationSeconds = frames / sr;
  const overrun = Math.max(0, durationSeconds - targetSeconds);
  const padded = naturalFrames < targetFrames ? (targetFrames - naturalFrames) / sr : 0;
  const exceeded = overrun > o.overrunSeconds + 1 / sr;
  if (exceeded) ctx.logger.warn({ targetSeconds, durationSeconds, allowedOverrun: o.overrunSeconds }, 'speech longer than its slot even at the fastest tempo');
  return { audio: { sampleRate: sr, channels: [result] }, sourceSeconds, speed, tempo, durationSeconds, overrunSeconds: overrun, paddedSeconds: padded, exceeded };
}
