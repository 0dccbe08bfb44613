/**
 * How long audio is cut into fixed-length model segments, as demucs' `apply_model` does with
 * `split=True`: segments start every `stride = floor((1 - overlap) * segment)` samples; each
 * covers `min(segment, length - offset)` samples and is fed to the model centred in a
 * full-length window (real audio around it where there is some, zeros past the ends); results
 * are blended with a triangular transition weight and normalized by the sum of weights.
 */

export interface SegmentWindow {
  /** Index of the window (0-based). */
  index: number;
  /** First output sample this window contributes to. */
  offset: number;
  /** Output samples it contributes to: min(segment, total - offset). */
  length: number;
  /** Input sample at the start of the model's full-length window (may be negative: zeros). */
  inputStart: number;
}

export interface WindowPlan {
  total: number;
  segment: number;
  stride: number;
  windows: SegmentWindow[];
}

/** The windows that cover `total` samples with segments of `segment` samples and `overlap`. */
export function planWindows(total: number, segment: number, overlap: number): WindowPlan {
  if (!Number.isInteger(total) || total < 0) throw new RangeError(`total must be a non-negative integer, got ${total}`);
  if (!Number.isInteger(segment) || segment < 1) throw new RangeError(`segment must be a positive integer, got ${segment}`);
  if (!(overlap >= 0 && overlap < 1)) throw new RangeError(`overlap must be in [0, 1), got ${overlap}`);
  const stride = Math.max(1, Math.floor((1 - overlap) * segment));
  const windows: SegmentWindow[] = [];
  for (let offset = 0, index = 0; offset < total; offset += stride, index++) {
    const length = Math.min(segment, total - offset);
    const delta = segment - length;
    windows.push({ index, offset, length, inputStart: offset - Math.floor(delta / 2) });
  }
  return { total, segment, stride, windows };
}

/**
 * demucs' transition weight: 1..segment/2 rising then falling back to 1, divided by its max
 * (`transition_power` 1).
 */
export function transitionWeight(segment: number): Float32Array {
  const half = Math.floor(segment / 2);
  const w = new Float32Array(segment);
  for (let i = 0; i < half; i++) w[i] = i + 1;
  for (let i = half, v = segment - half; i < segment; i++, v--) w[i] = v;
  let max = 0;
  for (let i = 0; i < segment; i++) if (w[i]! > max) max = w[i]!;
  for (let i = 0; i < segment; i++) w[i]! /= max;
  return w;
}
