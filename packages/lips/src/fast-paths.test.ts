/**
 * The per-pixel work of face detection (cropResize, under letterboxTensor) and of viseme-warp
 * (warpMouth at full resolution) runs on precomputed per-row and per-column terms; these are the
 * implementations they replaced, kept here as references: every output byte must be the same.
 */
import { describe, expect, it } from 'vitest';
import { WARP, warpMouth, warpMouthYuv } from './engines/mouth-warp.js';
import { frameOf } from './face/mouth-region.js';
import type { FaceFrame } from './face/mouth-region.js';
import { featherWeight, smoothstep } from './image/feather.js';
import { clipRect, cloneImage, createImage, cropResize, letterboxTensor, sampleBilinear, type Rect, type RgbImage } from './image/rgb-image.js';

/** A deterministic noise image with smooth structure (gradients + noise). */
function image(width: number, height: number, seed: number): RgbImage {
  const img = createImage(width, height);
  let s = seed >>> 0;
  const rnd = (): number => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) for (let c = 0; c < 3; c++) img.data[(y * width + x) * 3 + c] = Math.min(255, ((x * (c + 1) + y * 2) % 200) + rnd() * 55);
  return img;
}

function cropResizeReference(img: RgbImage, rect: Rect, width: number, height: number): RgbImage {
  const out = createImage(width, height);
  const sx = rect.w / width;
  const sy = rect.h / height;
  const super2 = sx > 2 || sy > 2;
  let o = 0;
  for (let j = 0; j < height; j++) {
    for (let i = 0; i < width; i++) {
      const cx = rect.x + (i + 0.5) * sx;
      const cy = rect.y + (j + 0.5) * sy;
      for (let c = 0; c < 3; c++) {
        let v: number;
        if (super2) {
          const qx = sx / 4;
          const qy = sy / 4;
          v = (sampleBilinear(img, cx - qx, cy - qy, c) + sampleBilinear(img, cx + qx, cy - qy, c) + sampleBilinear(img, cx - qx, cy + qy, c) + sampleBilinear(img, cx + qx, cy + qy, c)) / 4;
        } else v = sampleBilinear(img, cx, cy, c);
        out.data[o++] = v + 0.5;
      }
    }
  }
  return out;
}

const INNER = [52, 24, 26];
function warpMouthReference(frame: RgbImage, face: FaceFrame, amount: number): boolean {
  if (Math.abs(amount) < 0.01) return false;
  const box = clipRect(face.mouth, frame.width, frame.height);
  if (box.w < 4 || box.h < 4) return false;
  const d = face.eyeDistance;
  const { x: mx, y: my } = face.mouthCenter;
  const drop = WARP.jawDrop * d * Math.max(-1, Math.min(1, amount));
  const open = Math.max(0, amount);
  const y0 = my - WARP.rampAbove * d;
  const y1 = my + WARP.rampBelow * d;
  const yChin = my + WARP.chin * d;
  const yEnd = face.mouth.y + face.mouth.h;
  const pw = box.w;
  const ph = box.h;
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
      const sy = y - drop * wx * g;
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
        patch.data[k * 3 + c] = v + (INNER[c]! - v) * dark + 0.5;
      }
      alpha[k] = featherWeight(face.mouth, 0.35, x, y);
    }
  }
  let changed = false;
  const { data, width } = frame;
  for (let y = box.y; y < box.y + box.h; y++) {
    for (let x = box.x; x < box.x + box.w; x++) {
      const u = ((x + 0.5 - box.x) * pw) / box.w;
      const v = ((y + 0.5 - box.y) * ph) / box.h;
      const a = alpha[Math.min(ph - 1, Math.floor(v)) * pw + Math.min(pw - 1, Math.floor(u))]!;
      if (a <= 0) continue;
      const o = (y * width + x) * 3;
      for (let c = 0; c < 3; c++) {
        const p = patch.data[(Math.floor(v) * pw + Math.floor(u)) * 3 + c]!;
        const nv = Math.round(data[o + c]! + (p - data[o + c]!) * a);
        if (nv !== data[o + c]) {
          data[o + c] = nv;
          changed = true;
        }
      }
    }
  }
  return changed;
}

describe('fast paths give the bytes of the reference implementations', () => {
  it('cropResize: up- and downscaling, 2x2 grid, regions reaching outside the image', () => {
    const img = image(173, 131, 7);
    const rects: Rect[] = [
      { x: 0, y: 0, w: 173, h: 131 },
      { x: 10.3, y: 5.7, w: 60.2, h: 48.9 },
      { x: -40, y: -25.5, w: 260, h: 260 },
      { x: 120.25, y: 90.5, w: 90, h: 30 },
      { x: 50, y: 40, w: 7.5, h: 9.25 },
    ];
    for (const r of rects) {
      for (const [w, h] of [[256, 256], [128, 128], [96, 96], [31, 17], [300, 200]] as const) {
        expect(Buffer.from(cropResize(img, r, w, h).data).equals(Buffer.from(cropResizeReference(img, r, w, h).data))).toBe(true);
      }
    }
  });

  it('letterboxTensor: every value the crop byte / 127.5 - 1 in float32 (a table of the 256 bytes)', () => {
    const img = image(200, 150, 3);
    for (const r of [{ x: 0, y: 0, w: 200, h: 150 }, { x: -30.5, y: 40.25, w: 120, h: 90 }, { x: 150, y: 100, w: 300, h: 300 }]) {
      for (const size of [128, 256]) {
        const { tensor, box } = letterboxTensor(img, r, size);
        const side = Math.max(r.w, r.h);
        const crop = cropResizeReference(img, { x: r.x + r.w / 2 - side / 2, y: r.y + r.h / 2 - side / 2, w: side, h: side }, size, size);
        const want = new Float32Array(crop.data.length);
        for (let i = 0; i < want.length; i++) want[i] = crop.data[i]! / 127.5 - 1;
        expect(Buffer.from(tensor.buffer).equals(Buffer.from(want.buffer))).toBe(true);
        expect(box.scale).toBe(side / size);
      }
    }
  });

  it('warpMouth at full resolution: opening, closing, faces at the edges, tiny amounts', () => {
    const src = image(320, 240, 11);
    let compared = 0;
    let changedFrames = 0;
    for (const [mx, my, eye] of [[160, 150, 60], [160.37, 149.81, 47.3], [20, 230, 50], [310, 10, 80], [150, 120, 12.6], [100, 200, 140]] as const) {
      const face = frameOf([mx, my - eye * 0.6, eye * 2.2, mx, my, eye]);
      for (const amount of [1, 0.63, 0.2, 0.011, 0.005, -0.4, -1, 1.7]) {
        const a = cloneImage(src);
        const b = cloneImage(src);
        const changed = warpMouth(a, face, amount);
        expect(changed).toBe(warpMouthReference(b, face, amount));
        if (changed) changedFrames++;
        expect(Buffer.from(a.data).equals(Buffer.from(b.data))).toBe(true);
        compared++;
      }
    }
    expect(compared).toBe(48);
    expect(changedFrames).toBeGreaterThan(30);
  });

  it('warpMouthYuv: the RGB warp on the planes (within 3 levels after conversion), nothing changed outside the mouth box', () => {
    const w = 320;
    const h = 240;
    const rgb = image(w, h, 5);
    // BT.601 limited range, as ffmpeg converts rgb24 <-> yuv420p by default
    const yuv = new Uint8Array((w * h * 3) / 2);
    const Y = (r: number, g: number, b: number): number => 16 + (65.481 * r + 128.553 * g + 24.966 * b) / 255;
    for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) {
      const o = (y * w + x) * 3;
      yuv[y * w + x] = Math.round(Y(rgb.data[o]!, rgb.data[o + 1]!, rgb.data[o + 2]!));
    }
    for (let y = 0; y < h / 2; y++) for (let x = 0; x < w / 2; x++) {
      let r = 0, g = 0, b = 0;
      for (const [dx, dy] of [[0, 0], [1, 0], [0, 1], [1, 1]]) {
        const o = ((2 * y + dy!) * w + 2 * x + dx!) * 3;
        r += rgb.data[o]! / 4; g += rgb.data[o + 1]! / 4; b += rgb.data[o + 2]! / 4;
      }
      yuv[w * h + y * (w / 2) + x] = Math.round(128 + (-37.797 * r - 74.203 * g + 112 * b) / 255);
      yuv[w * h + (w * h) / 4 + y * (w / 2) + x] = Math.round(128 + (112 * r - 93.786 * g - 18.214 * b) / 255);
    }
    const face = frameOf([160, 100, 130, 160, 150, 60]);
    const a = cloneImage(rgb);
    expect(warpMouth(a, face, 0.8)).toBe(true);
    const frame = { width: w, height: h, data: new Uint8Array(yuv) };
    expect(warpMouthYuv(frame, face, 0.8)).toBe(true);
    const box = clipRect(face.mouth, w, h);
    let diff = 0;
    let n = 0;
    for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) {
      const inside = x >= box.x && x < box.x + box.w && y >= box.y && y < box.y + box.h;
      const i = y * w + x;
      if (!inside) expect(frame.data[i]).toBe(yuv[i]);
      else {
        const o = i * 3;
        diff += Math.abs(frame.data[i]! - Math.round(Y(a.data[o]!, a.data[o + 1]!, a.data[o + 2]!)));
        n++;
      }
    }
    expect(diff / n).toBeLessThan(3);
    expect(warpMouthYuv(frame, face, 0.005)).toBe(false);
  });
});

describe('warpMouthYuv keeps its bytes', () => {
  it('the planes of a noise frame, warped for faces across the frame and amounts from closing to opening, hash as before the channel-1 fast path', async () => {
    const { createHash } = await import('node:crypto');
    const w = 320;
    const h = 240;
    const base = new Uint8Array((w * h * 3) / 2);
    let s = 7;
    for (let i = 0; i < base.length; i++) base[i] = ((s = (s * 1664525 + 1013904223) >>> 0) >>> 24) ^ (i % 97);
    const hash = createHash('sha256');
    let changed = 0;
    for (const box of [[160, 100, 130, 160, 150, 60], [40, 60, 70, 90, 60, 40], [290, 200, 320, 230, 300, 30], [100, 120, 150, 140, 120, 75]] as const) {
      for (const amount of [-1, -0.4, 0.05, 0.3, 0.8, 1]) {
        const frame = { width: w, height: h, data: new Uint8Array(base) };
        if (warpMouthYuv(frame, frameOf([...box]), amount)) changed++;
        hash.update(frame.data);
      }
    }
    expect(changed).toBe(18);
    // computed with the code before the channel-1 path (2026-11-27); the same on 1802 tracked faces of talking-head-480
    expect(hash.digest('hex')).toBe('846d84c6bd759fd0748a397a9fa5068ec1610fc00f39c5add3ced5199f27b3d6');
  });
});
