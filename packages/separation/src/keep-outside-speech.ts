/**
 * Only speech is replaced: outside the speech regions the background track is the mix itself,
 * whatever the model (or no model) made there. Inside a region (widened by `pad` on each side,
 * regions closer than `join` joined) the background is the model's background, or silence when
 * no model ran; over `fade` seconds beyond each edge it cross-fades linearly into the mix:
 *
 *   background'(t) = w(t) * background(t) + (1 - w(t)) * mix(t),   w = 1 in speech, 0 outside.
 *
 * So an intro, an outro, music, effects, laughter and room tone between lines stay in the dub at
 * their level, sample for sample, and a source without a background worth separating keeps its
 * non-speech audio too ("no separation" means no model, not no background).
 */
import { throwIfAborted, ValidationError } from '@dub/core';
import type { AudioSink, AudioSource } from './audio-io.js';
import type { TimeSpan } from './background.js';

export interface KeepOutsideSpeechOptions {
  /** Seconds added to each side of a speech region (default 0.1). */
  pad?: number;
  /** Seconds of the linear cross-fade beyond the padded edge (default 0.1). */
  fade?: number;
  /** Padded regions closer than this (seconds) are joined: the mix does not come back for a breath (default 0.5). */
  join?: number;
}

export const KEEP_OUTSIDE_SPEECH_DEFAULTS = Object.freeze({ pad: 0.1, fade: 0.1, join: 0.5 });

export interface ResolvedKeep {
  pad: number;
  fade: number;
  join: number;
}

export function resolveKeep(o: KeepOutsideSpeechOptions = {}): ResolvedKeep {
  const r = { pad: o.pad ?? KEEP_OUTSIDE_SPEECH_DEFAULTS.pad, fade: o.fade ?? KEEP_OUTSIDE_SPEECH_DEFAULTS.fade, join: o.join ?? KEEP_OUTSIDE_SPEECH_DEFAULTS.join };
  for (const [k, v] of Object.entries(r)) {
    if (!(Number.isFinite(v) && v >= 0 && v <= 10)) throw new ValidationError(`keep.${k} must be within 0..10 seconds, got ${v}`, { field: `keep.${k}` });
  }
  return r;
}

/** What the background holds, in seconds of the input: the mix as it is, the replaced speech, and the cross-fades between. */
export interface KeptOutsideSpeech {
  /** Seconds where the background is the mix as it is (w = 0). */
  keptSeconds: number;
  /** Seconds where the source's audio is replaced (w = 1: the padded speech regions). */
  replacedSeconds: number;
  /** Seconds of cross-fade (0 < w < 1). */
  fadeSeconds: number;
  /** The replaced regions (padded and joined), seconds, sorted and disjoint. */
  replaced: TimeSpan[];
  pad: number;
  fade: number;
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;

/** The replaced regions: `speech` padded by `pad`, joined across gaps under `join`, clipped to [0, duration]. */
export function replacedRegions(speech: readonly TimeSpan[], duration: number, keep: KeepOutsideSpeechOptions = {}): TimeSpan[] {
  const k = resolveKeep(keep);
  const out: TimeSpan[] = [];
  for (const s of speech.slice().sort((a, b) => a.start - b.start)) {
    if (!(Number.isFinite(s.start) && Number.isFinite(s.end) && s.end >= s.start)) throw new ValidationError(`speech region [${s.start}, ${s.end}] is not a time span`, { field: 'speech' });
    const start = Math.max(0, s.start - k.pad);
    const end = Math.min(duration, s.end + k.pad);
    if (end <= start) continue;
    const last = out[out.length - 1];
    if (last && start - last.end < k.join) last.end = Math.max(last.end, end);
    else out.push({ start, end });
  }
  return out;
}

/** How much of an input of `duration` seconds keeps the mix, for the record. */
export function keptOutsideSpeech(speech: readonly TimeSpan[], duration: number, keep: KeepOutsideSpeechOptions = {}): KeptOutsideSpeech {
  const k = resolveKeep(keep);
  const replaced = replacedRegions(speech, duration, k);
  const replacedSeconds = replaced.reduce((s, x) => s + x.end - x.start, 0);
  // Fade stretches beyond each edge, clipped to the input and to the gap between regions (two fades may share a gap).
  let fadeSeconds = 0;
  for (let i = 0; i < replaced.length; i++) {
    const before = i === 0 ? replaced[i]!.start : (replaced[i]!.start - replaced[i - 1]!.end) / 2;
    const after = i === replaced.length - 1 ? duration - replaced[i]!.end : (replaced[i + 1]!.start - replaced[i]!.end) / 2;
    fadeSeconds += Math.min(k.fade, Math.max(0, before)) + Math.min(k.fade, Math.max(0, after));
  }
  return {
    keptSeconds: r3(Math.max(0, duration - replacedSeconds - fadeSeconds)),
    replacedSeconds: r3(replacedSeconds),
    fadeSeconds: r3(fadeSeconds),
    replaced: replaced.map((s) => ({ start: r3(s.start), end: r3(s.end) })),
    pad: k.pad,
    fade: k.fade,
  };
}

/**
 * The weight w of the model's (or silent) background per frame, from the replaced regions in
 * frames: 1 inside, falling linearly to 0 over `fadeFrames` beyond each edge (the larger weight
 * where two fades meet).
 */
export class SpeechWeight {
  private r = 0;

  constructor(
    private readonly regions: readonly (readonly [number, number])[],
    private readonly fadeFrames: number,
  ) {}

  /** Weights of frames [from, from + n) into `out`; calls must come in increasing `from`. */
  fill(from: number, out: Float32Array): void {
    const n = out.length;
    const f = this.fadeFrames;
    while (this.r < this.regions.length && this.regions[this.r]![1] + f <= from) this.r++;
    out.fill(0);
    for (let k = this.r; k < this.regions.length; k++) {
      const [a, b] = this.regions[k]!;
      if (a - f >= from + n) break;
      const lo = Math.max(from, a - f);
      const hi = Math.min(from + n, b + f);
      for (let t = lo; t < hi; t++) {
        const w = t < a ? (t - (a - f) + 0.5) / f : t >= b ? (b + f - t - 0.5) / f : 1;
        if (w > out[t - from]!) out[t - from] = w;
      }
    }
  }
}

const BLOCK = 1 << 16;

function stereo(block: Float32Array[]): [Float32Array, Float32Array] {
  const l = block[0] ?? new Float32Array(0);
  return [l, block.length > 1 ? block[1]! : l];
}

/**
 * Writes the kept background to `sink`: `background` (the model's, or silence when null) in the
 * speech regions, the mix outside, cross-faded. `mix` and `background` share the rate; the output
 * is stereo and has `background`'s length (the mix's when it is null); a mix shorter than that
 * counts as silence past its end.
 */
export async function keepOutsideSpeech(mix: AudioSource, background: AudioSource | null, speech: readonly TimeSpan[], sink: AudioSink, keep: KeepOutsideSpeechOptions = {}, signal?: AbortSignal): Promise<KeptOutsideSpeech> {
  if (background && background.sampleRate !== mix.sampleRate) throw new ValidationError(`the background (${background.sampleRate} Hz) and the mix (${mix.sampleRate} Hz) must share a rate`, { field: 'background' });
  const k = resolveKeep(keep);
  const rate = mix.sampleRate;
  const frames = background ? background.frames : mix.frames;
  const duration = frames / rate;
  const regions = replacedRegions(speech, duration, k).map((s) => [Math.round(s.start * rate), Math.round(s.end * rate)] as const);
  const weight = new SpeechWeight(regions, Math.max(1, Math.round(k.fade * rate)));
  let w = new Float32Array(0);
  for (let at = 0; at < frames; at += BLOCK) {
    throwIfAborted(signal);
    const n = Math.min(BLOCK, frames - at);
    if (w.length !== n) w = new Float32Array(n);
    weight.fill(at, w);
    const m = stereo(at < mix.frames ? await mix.read(at, Math.min(n, mix.frames - at)) : []);
    const b = background ? stereo(await background.read(at, n)) : undefined;
    const out = [new Float32Array(n), new Float32Array(n)];
    for (let c = 0; c < 2; c++) {
      const o = out[c]!;
      const mc = m[c]!;
      const bc = b?.[c];
      for (let i = 0; i < n; i++) {
        const wi = w[i]!;
        const mv = i < mc.length ? mc[i]! : 0;
        o[i] = wi === 0 ? mv : wi === 1 ? (bc ? bc[i]! : 0) : wi * (bc ? bc[i]! : 0) + (1 - wi) * mv;
      }
    }
    await sink.write(out);
  }
  return keptOutsideSpeech(speech, duration, k);
}
