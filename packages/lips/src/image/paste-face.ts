/**
 * A network's face in and out, as Wav2Lip and MuseTalk both take and give it: the input (six
 * CHW planes of one `size` x `size` crop: the crop with its lower half blanked, then the crop),
 * and the output (CHW float [0, 1], RGB or BGR planes) blended over `crop` of `frame` inside the
 * face's mouth box (feathered edge).
 */
import type { FaceFrame } from '../face/mouth-region.js';
import { featherWeight } from './feather.js';
import { clipRect, sampleBilinear, type Rect, type RgbImage } from './rgb-image.js';

/**
 * A network's face input of one `size` x `size` crop: six CHW planes, the crop with its lower half
 * blanked (black), then the crop itself, channels in `planes` order, each sample scaled from
 * [0, 1] to `range` (Wav2Lip: [0, 1] BGR; MuseTalk: [-1, 1] RGB, its lower half at -1).
 */
export function networkFaceInput(crop: RgbImage, size: number, planes: 'rgb' | 'bgr', range: '0..1' | '-1..1'): Float32Array {
  const s = size;
  const plane = s * s;
  const out = new Float32Array(6 * plane);
  const blank = range === '0..1' ? 0 : -1;
  for (let y = 0; y < s; y++) {
    for (let x = 0; x < s; x++) {
      const p = y * s + x;
      for (let c = 0; c < 3; c++) {
        const unit = crop.data[p * 3 + (planes === 'bgr' ? 2 - c : c)]! / 255;
        const v = range === '0..1' ? unit : unit * 2 - 1;
        out[c * plane + p] = y < s / 2 ? v : blank;
        out[(3 + c) * plane + p] = v;
      }
    }
  }
  return out;
}

/** A network's face output pasted over `crop` of `frame`; returns whether any pixel of `frame` changed. */
export function pasteNetworkFace(frame: RgbImage, face: FaceFrame, crop: Rect, output: Float32Array, size: number, planes: 'rgb' | 'bgr'): boolean {
  const s = size;
  const plane = s * s;
  const img = { width: s, height: s, data: new Uint8Array(plane * 3) };
  for (let p = 0; p < plane; p++) for (let c = 0; c < 3; c++) img.data[p * 3 + c] = Math.round(Math.min(1, Math.max(0, output[(planes === 'bgr' ? 2 - c : c) * plane + p]!)) * 255);
  const region = clipRect(face.mouth, frame.width, frame.height);
  let changed = false;
  for (let y = region.y; y < region.y + region.h; y++) {
    for (let x = region.x; x < region.x + region.w; x++) {
      const a = featherWeight(face.mouth, 0.35, x + 0.5, y + 0.5);
      if (a <= 0) continue;
      const u = ((x + 0.5 - crop.x) / crop.w) * s;
      const v = ((y + 0.5 - crop.y) / crop.h) * s;
      if (u < 0 || v < 0 || u > s || v > s) continue;
      const o = (y * frame.width + x) * 3;
      for (let c = 0; c < 3; c++) {
        const nv = Math.round(frame.data[o + c]! + (sampleBilinear(img, u, v, c) - frame.data[o + c]!) * a);
        if (nv !== frame.data[o + c]) {
          frame.data[o + c] = nv;
          changed = true;
        }
      }
    }
  }
  return changed;
}
