/**
 * Mouth openness per video frame, from speech levels: 0 below a gate 30 dB under the track's
 * speech level (its 95th percentile), rising to 1 over the next 24 dB; opening fast and closing a
 * little slower, as jaws do. Viseme weights, where known, shape it (a "p" closes the lips however
 * loud it is). The target relative to the source frame is the dub's openness where the dub
 * speaks, and minus the source speaker's openness (close the mouth) where only the source speaks.
 */

export interface OpennessOptions {
  /** Gate below the speech level, dB (default 30). */
  gateDb?: number;
  /** Range from the gate to fully open, dB (default 24). */
  rangeDb?: number;
  /** Per-frame smoothing when opening and closing, 0..1 of the step kept (defaults 0.75, 0.45). */
  attack?: number;
  release?: number;
  /**
   * Frames on each side of a frame over which its speech level (the 95th percentile) is taken
   * (default 0: the whole track). viseme-warp uses 5 s: the mouth then depends on the speech near
   * it only, so editing one line changes the openness of the frames near that line alone.
   */
  refWindow?: number;
}

function percentile(values: Float32Array, p: number, floor: number): number {
  const v = Array.from(values).filter((x) => x > floor).sort((a, b) => a - b);
  if (!v.length) return floor;
  return v[Math.min(v.length - 1, Math.floor(p * v.length))];
}

/**
 * The gate of each frame: `gateDb` under the 95th percentile of the levels around it (the whole
 * track when `window` is 0; else blocks of `window / 5` frames share the percentile of the block
 * widened by `window` frames on each side).
 */
function gateLevels(levels: Float32Array, gateDb: number, window: number): Float32Array {
  const out = new Float32Array(levels.length);
  if (window <= 0) return out.fill(Math.max(percentile(levels, 0.95, -70) - gateDb, -70));
  const block = Math.max(1, Math.round(window / 5));
  for (let b = 0; b < levels.length; b += block) {
    const ref = percentile(levels.subarray(Math.max(0, b - window), Math.min(levels.length, b + block + window)), 0.95, -70);
    out.fill(Math.max(ref - gateDb, -70), b, Math.min(levels.length, b + block));
  }
  return out;
}

/** Openness 0..1 per frame from dBFS levels. */
export function opennessFromLevels(levels: Float32Array, opts: OpennessOptions = {}): Float32Array {
  const gates = gateLevels(levels, opts.gateDb ?? 30, opts.refWindow ?? 0);
  const range = opts.rangeDb ?? 24;
  const attack = opts.attack ?? 0.75;
  const release = opts.release ?? 0.45;
  const out = new Float32Array(levels.length);
  let y = 0;
  for (let i = 0; i < levels.length; i++) {
    const x = Math.min(1, Math.max(0, (levels[i] - gates[i]) / range));
    const target = Math.pow(x, 0.8);
    y += (target - y) * (target > y ? attack : release);
    out[i] = y < 1e-3 ? 0 : y;
  }
  return out;
}

/** Shape openness with viseme weights (NaN: no word, keep the envelope). */
export function applyVisemes(openness: Float32Array, weights: Float32Array): Float32Array {
  const out = new Float32Array(openness.length);
  for (let i = 0; i < openness.length; i++) {
    const w = weights[i];
    out[i] = Number.isNaN(w) ? openness[i] : openness[i] * (0.3 + 0.7 * w);
  }
  return out;
}

/**
 * How much to open (> 0) or close (< 0) each source frame's mouth: the dub's openness where the
 * dub speaks; where it is silent, minus the source speaker's openness (0 when both are silent).
 */
export function mouthTargets(dub: Float32Array, source?: Float32Array): Float32Array {
  const out = new Float32Array(dub.length);
  for (let i = 0; i < dub.length; i++) {
    const s = source ? source[i] ?? 0 : 0;
    const speaking = Math.min(1, dub[i] * 4);
    out[i] = dub[i] - s * (1 - speaking);
  }
  return out;
}
