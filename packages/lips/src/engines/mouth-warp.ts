/**
 * The viseme-warp frame operation: open or close the mouth of one frame by a smooth vertical
 * displacement of the lower lip and jaw, and darken the opening between the lips.
 *
 * Geometry, in eye distances d around the mouth centre (mx, my): the lower lip and chin move down
 * by up to 0.2 d (`amount` 1), the upper lip stays; the displacement ramps up over the lip line
 * (from 0.1 d above the mouth centre to 0.25 d below it, slope < 1 so the map never folds), holds
 * over the chin and returns to 0 at the bottom of the mouth box; sideways it falls off with cos²
 * over 0.7 d. Each output pixel samples the source at (x, y - D(x, y)). The gap that opens is
 * darkened towards the inside of a mouth. Everything is weighted by a feathered ellipse inside
 * the mouth box, so pixels outside it never change. Negative amounts close the mouth instead.
 */
import type { FaceFrame } from '../face/mouth-region.js';
import { clipRect, createImage, sampleBilinear, type Rect, type RgbImage } from '../image/rgb-image.js';
import { featherWeight, smoothstep } from '../image/feather.js';

export const WARP = Object.freeze({ jawDrop: 0.2, rampAbove: 0.1, rampBelow: 0.25, chin: 0.55, halfWidth: 0.7, innerHalfWidth: 0.36, darken: 0.7 });
const INNER = [52, 24, 26];

/**
 * Warp the mouth of `frame` (in place) by `amount` in [-1, 1]; `workScale` < 1 computes the mouth
 * patch at that fraction of the resolution and scales it back (faster, softer). Returns whether
 * any pixel changed.
 */
export function warpMouth(frame: RgbImage, face: FaceFrame, amount: number, workScale = 1): boolean {
  if (Math.abs(amount) < 0.01) return false;
  const box = clipRect(face.mouth, frame.width, frame.height);
  if (box.w < 4 || box.h < 4) return false;
  const s = Math.min(1, Math.max(0.25, workScale));
  return s === 1 ? warpSamples(frame.data, 0, frame.width, frame.height, 3, 1, face, amount, INNER) : warpScaled(frame, face, amount, box, s);
}

/** The warp's geometry for one face and amount (see the file's comment). */
function geometry(face: FaceFrame, amount: number) {
  const d = face.eyeDistance;
  const { x: mx, y: my } = face.mouthCenter;
  const drop = WARP.jawDrop * d * Math.max(-1, Math.min(1, amount));
  return { d, mx, my, drop, open: Math.max(0, amount), y0: my - WARP.rampAbove * d, y1: my + WARP.rampBelow * d, yChin: my + WARP.chin * d, yEnd: face.mouth.y + face.mouth.h };
}

/** Below full resolution: the patch at `s` of the box's size, scaled back bilinearly. */
function warpScaled(frame: RgbImage, face: FaceFrame, amount: number, box: Rect, s: number): boolean {
  const { d, mx, my, drop, open, y0, y1, yChin, yEnd } = geometry(face, amount);
  const pw = Math.max(2, Math.round(box.w * s));
  const ph = Math.max(2, Math.round(box.h * s));
  const patch = createImage(pw, ph);
  const alpha = new Float32Array(pw * ph);
  for (let j = 0; j < ph; j++) {
    const y = box.y + ((j + 0.5) * box.h) / ph;
    const g = y < yChin ? smoothstep(y0, y1, y) : 1 - smoothstep(yChin, yEnd, y);
    for (let i = 0; i < pw; i++) {
      const x = box.x + ((i + 0.5) * box.w) / pw;
      const k = j * pw + i;
      const ax = Math.abs(x - mx) / (WARP.halfWidth * d);
      const wx = ax < 1 ? Math.cos((ax * Math.PI) / 2) ** 2 : 0;
      const dy = drop * wx * g;
      const sy = y - dy;
      // inner mouth: the part of the opened gap between the lips
      let dark = 0;
      if (open > 0) {
        const ai = Math.abs(x - mx) / (WARP.innerHalfWidth * d);
        if (ai < 1) {
          const gapTop = my + 0.03 * d;
          const gapBottom = gapTop + Math.abs(drop) * wx * 0.9;
          const mid = (gapTop + gapBottom) / 2;
          const half = (gapBottom - gapTop) / 2;
          if (half > 0.5) dark = WARP.darken * open * (1 - smoothstep(0.5, 1, Math.abs(y - mid) / half)) * (1 - smoothstep(0.6, 1, ai));
        }
      }
      for (let c = 0; c < 3; c++) {
        const v = sampleBilinear(frame, x, sy, c);
        patch.data[k * 3 + c] = v + (INNER[c] - v) * dark + 0.5;
      }
      alpha[k] = featherWeight(face.mouth, 0.35, x, y);
    }
  }
  // composite (from a copy of the source region: the patch sampled the unchanged frame)
  let changed = false;
  const { data, width } = frame;
  for (let y = box.y; y < box.y + box.h; y++) {
    for (let x = box.x; x < box.x + box.w; x++) {
      const u = ((x + 0.5 - box.x) * pw) / box.w;
      const v = ((y + 0.5 - box.y) * ph) / box.h;
      const a = s === 1 ? alpha[Math.min(ph - 1, Math.floor(v)) * pw + Math.min(pw - 1, Math.floor(u))] : featherWeight(face.mouth, 0.35, x + 0.5, y + 0.5);
      if (a <= 0) continue;
      const o = (y * width + x) * 3;
      for (let c = 0; c < 3; c++) {
        const p = s === 1 ? patch.data[((Math.floor(v) * pw + Math.floor(u)) * 3) + c] : sampleBilinear(patch, u, v, c);
        const nv = Math.round(data[o + c] + (p - data[o + c]) * a);
        if (nv !== data[o + c]) {
          data[o + c] = nv;
          changed = true;
        }
      }
    }
  }
  return changed;
}

/** A frame as ffmpeg's yuv420p (I420): the Y plane, then U and V at half width and height. */
export interface YuvImage {
  readonly width: number;
  readonly height: number;
  readonly data: Uint8Array;
}

/** The inner-mouth colour (INNER) in BT.601 limited-range Y, U, V: ffmpeg's default for rgb24 <-> yuv420p. */
const INNER_YUV = [44, 125, 140];

/**
 * warpMouth on a yuv420p frame, in place: the same displacement, darkening and feathered mask,
 * computed on each plane at its own resolution (luma at full, chroma at half), so the frame is
 * never converted to RGB and every pixel outside the mask keeps its decoded value exactly.
 */
export function warpMouthYuv(frame: YuvImage, face: FaceFrame, amount: number): boolean {
  if (Math.abs(amount) < 0.01) return false;
  const { width, height } = frame;
  if (width % 2 || height % 2) throw new RangeError(`yuv420p frames have an even size, got ${width}x${height}`);
  if (clipRect(face.mouth, width, height).w < 4 || clipRect(face.mouth, width, height).h < 4) return false;
  const cw = width / 2;
  const ch = height / 2;
  let changed = warpSamples(frame.data, 0, width, height, 1, 1, face, amount, [INNER_YUV[0]!]);
  changed = warpSamples(frame.data, width * height, cw, ch, 1, 2, face, amount, [INNER_YUV[1]!]) || changed;
  changed = warpSamples(frame.data, width * height + cw * ch, cw, ch, 1, 2, face, amount, [INNER_YUV[2]!]) || changed;
  return changed;
}

/**
 * Full resolution, on interleaved samples: `pw` x `ph` pixels of `channels` samples each from
 * `offset` of `data` (an RGB frame: 3; one yuv420p plane: 1), each pixel covering `scale` x `scale`
 * frame pixels, `inner` the inner-mouth colour in those channels. Every pixel of the mouth box is
 * its own patch sample, at the pixel's centre horizontally, so the bilinear sample is a blend of
 * two rows of the same column: the same arithmetic as warpScaled's general path, with the
 * per-column and per-row terms computed once.
 */
function warpSamples(data: Uint8Array, offset: number, pw: number, ph: number, channels: number, scale: number, face: FaceFrame, amount: number, inner: readonly number[]): boolean {
  const { d, mx, my, drop, open, y0, y1, yChin, yEnd } = geometry(face, amount);
  const m = face.mouth;
  const box = clipRect({ x: m.x / scale, y: m.y / scale, w: m.w / scale, h: m.h / scale }, pw, ph);
  if (box.w < 1 || box.h < 1) return false;
  const hx = m.x + m.w / 2;
  const hy = m.y + m.h / 2;
  // per column: the horizontal falloff, the inner-mouth weight, the ellipse's dx²
  const wxs = new Float64Array(box.w);
  const innerW = new Float64Array(box.w);
  const dx2 = new Float64Array(box.w);
  for (let i = 0; i < box.w; i++) {
    const x = (box.x + i + 0.5) * scale;
    const ax = Math.abs(x - mx) / (WARP.halfWidth * d);
    wxs[i] = ax < 1 ? Math.cos((ax * Math.PI) / 2) ** 2 : 0;
    const ai = Math.abs(x - mx) / (WARP.innerHalfWidth * d);
    innerW[i] = ai < 1 ? 1 - smoothstep(0.6, 1, ai) : -1;
    const dx = (x - hx) / (m.w / 2);
    dx2[i] = dx * dx;
  }
  // per column: the displacement's horizontal factor and the opened gap's middle and half height
  const dropX = new Float64Array(box.w);
  const gapMid = new Float64Array(box.w);
  const gapHalf = new Float64Array(box.w);
  for (let i = 0; i < box.w; i++) {
    const wx = wxs[i]!;
    dropX[i] = drop * wx;
    const gapTop = my + 0.03 * d;
    const gapBottom = gapTop + Math.abs(drop) * wx * 0.9;
    gapMid[i] = (gapTop + gapBottom) / 2;
    gapHalf[i] = (gapBottom - gapTop) / 2;
  }
  const darkness = WARP.darken * open;
  // One pass: each pixel's new value is its patch sample (two rows of its own column, above it
  // when the mouth opens, below when it closes) blended over it. Rows are visited away from the
  // rows they sample (bottom-up when opening, top-down when closing), so every sample still reads
  // unchanged values, the same as a patch taken from a copy; a row on the other side is only ever
  // read with a zero weight. No patch or weight arrays.
  const up = drop > 0;
  const inner0 = inner[0]!;
  const lastRow = ph - 1;
  let changed = false;
  for (let jj = 0; jj < box.h; jj++) {
    const j = up ? box.h - 1 - jj : jj;
    const y = (box.y + j + 0.5) * scale;
    const g = y < yChin ? smoothstep(y0, y1, y) : 1 - smoothstep(yChin, yEnd, y);
    const dyc = (y - hy) / (m.h / 2);
    const dy2 = dyc * dyc;
    const row = offset + ((box.y + j) * pw + box.x) * channels;
    for (let i = 0; i < box.w; i++) {
      const r2 = dx2[i]! + dy2;
      // outside the ellipse (r >= 1) the weight is 0 and inside 0.65 of it 1, without the square root
      if (r2 >= 1) continue; // alpha 0: never composited
      const a = r2 < 0.42 ? 1 : 1 - smoothstep(1 - 0.35, 1, Math.sqrt(r2));
      if (a <= 0) continue;
      const sy = y - dropX[i]! * g;
      let dark = 0;
      if (open > 0 && innerW[i]! >= 0) {
        const half = gapHalf[i]!;
        if (half > 0.5) dark = darkness * (1 - smoothstep(0.5, 1, Math.abs(y - gapMid[i]!) / half)) * innerW[i]!;
      }
      // sampleBilinear at (pixel centre, sy): the rows around sy (in samples), clamped
      let fy = sy / scale - 0.5;
      if (fy < 0) fy = 0;
      if (fy > lastRow) fy = lastRow;
      const r0 = fy | 0; // fy >= 0: Math.floor
      const r1 = r0 + 1 < ph ? r0 + 1 : r0;
      const ay = fy - r0;
      const o0 = offset + (r0 * pw + box.x + i) * channels;
      const o1 = offset + (r1 * pw + box.x + i) * channels;
      const o = row + i * channels;
      if (channels === 1) {
        const v = data[o0]! * (1 - ay) + data[o1]! * ay;
        const p = (v + (inner0 - v) * dark + 0.5) | 0;
        const src = data[o]!;
        const nv = a === 1 ? p : Math.round(src + (p - src) * a);
        if (nv !== src) {
          data[o] = nv;
          changed = true;
        }
        continue;
      }
      for (let c = 0; c < channels; c++) {
        const v = data[o0 + c]! * (1 - ay) + data[o1 + c]! * ay; // sampleBilinear's blend with a zero horizontal weight
        const p = (v + (inner[c]! - v) * dark + 0.5) | 0; // the patch's byte (a Uint8Array store truncates the same way)
        const src = data[o + c]!;
        const nv = Math.round(src + (p - src) * a);
        if (nv !== src) {
          data[o + c] = nv;
          changed = true;
        }
      }
    }
  }
  return changed;
}
