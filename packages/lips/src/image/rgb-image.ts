/**
 * Packed 8-bit RGB images (ffmpeg's rgb24: row-major, 3 bytes per pixel) and the few operations
 * the lips stage needs on them: bilinear sampling, crops resized into another size, and a
 * letterboxed, normalised tensor for a detector.
 */

export interface RgbImage {
  readonly width: number;
  readonly height: number;
  /** width * height * 3 bytes, R G B per pixel. */
  readonly data: Uint8Array;
}

/** Axis-aligned rectangle in pixels (x, y of the top-left corner). */
export interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

export function createImage(width: number, height: number, data?: Uint8Array): RgbImage {
  const n = width * height * 3;
  if (data && data.length !== n) throw new RangeError(`image ${width}x${height} needs ${n} bytes, got ${data.length}`);
  return { width, height, data: data ?? new Uint8Array(n) };
}

export function cloneImage(img: RgbImage): RgbImage {
  return { width: img.width, height: img.height, data: new Uint8Array(img.data) };
}

/**
 * Bilinear sample of channel `c` at (x, y) in pixel-centre coordinates (pixel i covers
 * [i, i+1), its centre is i + 0.5); outside the image the edge pixels repeat.
 */
export function sampleBilinear(img: RgbImage, x: number, y: number, c: number): number {
  const { width, height, data } = img;
  let fx = x - 0.5;
  let fy = y - 0.5;
  if (fx < 0) fx = 0;
  if (fy < 0) fy = 0;
  if (fx > width - 1) fx = width - 1;
  if (fy > height - 1) fy = height - 1;
  const x0 = Math.floor(fx);
  const y0 = Math.floor(fy);
  const x1 = x0 + 1 < width ? x0 + 1 : x0;
  const y1 = y0 + 1 < height ? y0 + 1 : y0;
  const ax = fx - x0;
  const ay = fy - y0;
  const r0 = y0 * width;
  const r1 = y1 * width;
  const a = data[(r0 + x0) * 3 + c];
  const b = data[(r0 + x1) * 3 + c];
  const d = data[(r1 + x0) * 3 + c];
  const e = data[(r1 + x1) * 3 + c];
  return (a + (b - a) * ax) * (1 - ay) + (d + (e - d) * ax) * ay;
}

/**
 * The region `rect` of `img` (may reach outside it: edges repeat) resized to `width` x `height`
 * with bilinear sampling. When shrinking by more than 2x, each output pixel averages a 2x2 grid
 * of samples so small details do not alias.
 */
export function cropResize(img: RgbImage, rect: Rect, width: number, height: number): RgbImage {
  const out = createImage(width, height);
  const sx = rect.w / width;
  const sy = rect.h / height;
  const super2 = sx > 2 || sy > 2;
  // The sample positions of each output column and row (1 per axis, or 2 with the 2x2 grid) with
  // their source pixels and weights, computed once per axis: the same values and arithmetic as
  // sampleBilinear at every sample, without the per-pixel clamping and flooring.
  const xs = axisSamples(width, rect.x, sx, super2 ? [-sx / 4, sx / 4] : [0], img.width, 3);
  const ys = axisSamples(height, rect.y, sy, super2 ? [-sy / 4, sy / 4] : [0], img.height, img.width * 3);
  const data = img.data;
  const od = out.data;
  let o = 0;
  if (!super2) {
    for (let j = 0; j < height; j++) {
      const r0 = ys.i0[j]!;
      const r1 = ys.i1[j]!;
      const ay = ys.w[j]!;
      for (let i = 0; i < width; i++) {
        const c0 = xs.i0[i]!;
        const c1 = xs.i1[i]!;
        const ax = xs.w[i]!;
        for (let c = 0; c < 3; c++) {
          const a = data[r0 + c0 + c]!;
          const b = data[r0 + c1 + c]!;
          const d = data[r1 + c0 + c]!;
          const e = data[r1 + c1 + c]!;
          od[o++] = (a + (b - a) * ax) * (1 - ay) + (d + (e - d) * ax) * ay + 0.5;
        }
      }
    }
    return out;
  }
  // (plain locals, no destructured arrays: those were allocated per pixel, a third of the faces stage's time in the collector)
  for (let j = 0; j < height; j++) {
    const ra0 = ys.i0[2 * j]!;
    const ra1 = ys.i1[2 * j]!;
    const aya = ys.w[2 * j]!;
    const rb0 = ys.i0[2 * j + 1]!;
    const rb1 = ys.i1[2 * j + 1]!;
    const ayb = ys.w[2 * j + 1]!;
    for (let i = 0; i < width; i++) {
      const ca0 = xs.i0[2 * i]!;
      const ca1 = xs.i1[2 * i]!;
      const axa = xs.w[2 * i]!;
      const cb0 = xs.i0[2 * i + 1]!;
      const cb1 = xs.i1[2 * i + 1]!;
      const axb = xs.w[2 * i + 1]!;
      for (let c = 0; c < 3; c++) {
        od[o++] = (bilinearAt(data, ra0, ra1, aya, ca0 + c, ca1 + c, axa) + bilinearAt(data, ra0, ra1, aya, cb0 + c, cb1 + c, axb) + bilinearAt(data, rb0, rb1, ayb, ca0 + c, ca1 + c, axa) + bilinearAt(data, rb0, rb1, ayb, cb0 + c, cb1 + c, axb)) / 4 + 0.5;
      }
    }
  }
  return out;
}

/** One bilinear sample from rows r0, r1 (weight ay of r1) and columns c0, c1 (weight ax of c1), as offsets into `data`. */
function bilinearAt(data: Uint8Array, r0: number, r1: number, ay: number, c0: number, c1: number, ax: number): number {
  const a = data[r0 + c0]!;
  const b = data[r0 + c1]!;
  const d = data[r1 + c0]!;
  const e = data[r1 + c1]!;
  return (a + (b - a) * ax) * (1 - ay) + (d + (e - d) * ax) * ay;
}

/**
 * For output index k along one axis and each offset, the sample position start + (k + 0.5) * step
 * + offset as sampleBilinear clamps and splits it: the two source pixels (times `stride`, ready
 * to index the data) and the weight of the second.
 */
function axisSamples(n: number, start: number, step: number, offsets: readonly number[], size: number, stride: number): { i0: Int32Array; i1: Int32Array; w: Float64Array } {
  const m = n * offsets.length;
  const i0 = new Int32Array(m);
  const i1 = new Int32Array(m);
  const w = new Float64Array(m);
  let k = 0;
  for (let i = 0; i < n; i++) {
    const centre = start + (i + 0.5) * step;
    for (const off of offsets) {
      let f = (off === 0 ? centre : centre + off) - 0.5;
      if (f < 0) f = 0;
      if (f > size - 1) f = size - 1;
      const p0 = Math.floor(f);
      const p1 = p0 + 1 < size ? p0 + 1 : p0;
      i0[k] = p0 * stride;
      i1[k] = p1 * stride;
      w[k] = f - p0;
      k++;
    }
  }
  return { i0, i1, w };
}

/** Intersection of `r` with the image bounds, in whole pixels (empty: w or h is 0). */
export function clipRect(r: Rect, width: number, height: number): Rect {
  const x0 = Math.max(0, Math.floor(r.x));
  const y0 = Math.max(0, Math.floor(r.y));
  const x1 = Math.min(width, Math.ceil(r.x + r.w));
  const y1 = Math.min(height, Math.ceil(r.y + r.h));
  return { x: x0, y: y0, w: Math.max(0, x1 - x0), h: Math.max(0, y1 - y0) };
}

/** `r` grown by `factor` around its centre. */
export function scaleRect(r: Rect, factor: number): Rect {
  const cx = r.x + r.w / 2;
  const cy = r.y + r.h / 2;
  return { x: cx - (r.w * factor) / 2, y: cy - (r.h * factor) / 2, w: r.w * factor, h: r.h * factor };
}

/** How a square detector input maps back to the source image: source = input * scale + offset. */
export interface Letterbox {
  size: number;
  scale: number;
  offsetX: number;
  offsetY: number;
}

/** byte / 127.5 - 1 for every byte, as float32 (a tensor holds the same float32 the division rounds to). */
const UNIT_OF_BYTE = Float32Array.from({ length: 256 }, (_, b) => b / 127.5 - 1);

/**
 * The square region `rect` (any aspect: padded to a square around its centre) resized into a
 * `size` x `size` float tensor, NHWC, values mapped from [0, 255] to [-1, 1]. Outside the image
 * the edge pixels repeat (so the padding looks like the border, not like a black frame).
 */
export function letterboxTensor(img: RgbImage, rect: Rect, size: number): { tensor: Float32Array; box: Letterbox } {
  const side = Math.max(rect.w, rect.h);
  const x0 = rect.x + rect.w / 2 - side / 2;
  const y0 = rect.y + rect.h / 2 - side / 2;
  const scale = side / size;
  const crop = cropResize(img, { x: x0, y: y0, w: side, h: side }, size, size);
  const tensor = new Float32Array(size * size * 3);
  const data = crop.data;
  for (let i = 0; i < tensor.length; i++) tensor[i] = UNIT_OF_BYTE[data[i]!]!;
  return { tensor, box: { size, scale, offsetX: x0, offsetY: y0 } };
}
