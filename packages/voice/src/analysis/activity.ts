/**
 * Frame energies of mono audio, the extent of its non-silent part (for trimming leading and
 * trailing silence), and a syllable-rate estimate from peaks of the energy envelope.
 */

export interface ActivityOptions {
  /** Frame length in seconds (default 0.01). */
  frameSeconds?: number;
  /** Frames this many dB below the loudest frame count as silence (default 40). */
  relativeDb?: number;
  /** Frames below this level in dBFS always count as silence (default -60). */
  floorDb?: number;
}

/** RMS level in dBFS per frame (-Infinity for digital silence). */
export function frameLevels(samples: Float32Array, sampleRate: number, frameSeconds = 0.01): Float32Array {
  const n = Math.max(1, Math.round(frameSeconds * sampleRate));
  const frames = Math.ceil(samples.length / n);
  const out = new Float32Array(frames);
  for (let f = 0; f < frames; f++) {
    let e = 0;
    const end = Math.min(samples.length, (f + 1) * n);
    for (let i = f * n; i < end; i++) e += samples[i]! * samples[i]!;
    out[f] = 10 * Math.log10(e / Math.max(1, end - f * n));
  }
  return out;
}

/** Per-frame activity flags with the thresholds of `opts`. */
export function activeFrames(samples: Float32Array, sampleRate: number, opts: ActivityOptions = {}): { frameSamples: number; active: Uint8Array } {
  const frameSeconds = opts.frameSeconds ?? 0.01;
  const levels = frameLevels(samples, sampleRate, frameSeconds);
  let max = -Infinity;
  for (const l of levels) if (l > max) max = l;
  const thr = Math.max(opts.floorDb ?? -60, max - (opts.relativeDb ?? 40));
  const active = new Uint8Array(levels.length);
  for (let i = 0; i < levels.length; i++) active[i] = levels[i]! > thr ? 1 : 0;
  return { frameSamples: Math.max(1, Math.round(frameSeconds * sampleRate)), active };
}

/** [start, end) sample range from the first to the last non-silent frame; empty when all silent. */
export function speechExtent(samples: Float32Array, sampleRate: number, opts: ActivityOptions = {}): { start: number; end: number } {
  const { frameSamples, active } = activeFrames(samples, sampleRate, opts);
  const first = active.indexOf(1);
  if (first < 0) return { start: 0, end: 0 };
  const last = active.lastIndexOf(1);
  return { start: first * frameSamples, end: Math.min(samples.length, (last + 1) * frameSamples) };
}

/** The samples without leading and trailing silence (a view, not a copy). */
export function trimSilence(samples: Float32Array, sampleRate: number, opts: ActivityOptions = {}): Float32Array {
  const { start, end } = speechExtent(samples, sampleRate, opts);
  return samples.subarray(start, end);
}

/**
 * Syllables per second of speaking time: peaks of the smoothed energy envelope that stand at
 * least 2.5 dB over the valleys around them and are 90 ms or more apart, over the time of
 * non-silent frames.
 */
export function syllableRate(samples: Float32Array, sampleRate: number): { syllables: number; speechSeconds: number; perSecond: number } {
  const frameSeconds = 0.01;
  const raw = frameLevels(samples, sampleRate, frameSeconds);
  const levels = new Float32Array(raw.length);
  // 50 ms moving average over the levels (floored so silence does not dominate)
  const floor = -70;
  for (let i = 0; i < raw.length; i++) {
    let s = 0;
    let c = 0;
    for (let k = -2; k <= 2; k++) {
      const v = raw[i + k];
      if (v === undefined) continue;
      s += Math.max(floor, v);
      c++;
    }
    levels[i] = s / c;
  }
  let max = -Infinity;
  for (const l of levels) if (l > max) max = l;
  const voicedThr = max - 30;
  let speechFrames = 0;
  for (const l of levels) if (l > voicedThr) speechFrames++;
  const minDist = 9;
  const peaks: number[] = [];
  for (let i = 1; i < levels.length - 1; i++) {
    const v = levels[i]!;
    if (v <= voicedThr || v < levels[i - 1]! || v < levels[i + 1]!) continue;
    // prominence: the lowest point between this and a higher peak on each side
    // (running off either end of the clip counts as reaching silence)
    let left = v;
    let j = i - 1;
    for (; j >= 0 && levels[j]! <= v; j--) left = Math.min(left, levels[j]!);
    if (j < 0) left = floor;
    let right = v;
    let k = i + 1;
    for (; k < levels.length && levels[k]! <= v; k++) right = Math.min(right, levels[k]!);
    if (k >= levels.length) right = floor;
    if (v - Math.max(left, right) < 2.5) continue;
    const prev = peaks[peaks.length - 1];
    if (prev !== undefined && i - prev < minDist) {
      if (v > levels[prev]!) peaks[peaks.length - 1] = i;
      continue;
    }
    peaks.push(i);
  }
  const speechSeconds = speechFrames * frameSeconds;
  return { syllables: peaks.length, speechSeconds, perSecond: speechSeconds > 0 ? peaks.length / speechSeconds : 0 };
}
