/**
 * From one face detection to the geometry the lips engines use: the face box, the mouth centre
 * (BlazeFace's mouth keypoint), the eye distance (the face's scale) and the mouth box, the only
 * region an engine may change: 1.5 eye distances wide around the mouth, from just under the nose
 * (0.45 above the mouth centre) to the chin (0.85 below).
 */
import { KEYPOINT, type Point } from './decode.js';
import type { FaceDetection } from './blazeface.js';
import type { Rect } from '../image/rgb-image.js';

export interface FaceFrame {
  face: Rect;
  mouth: Rect;
  mouthCenter: Point;
  eyeDistance: number;
}

/** Geometry as a flat vector for interpolation and smoothing. */
export type FaceParams = [faceCx: number, faceCy: number, faceSize: number, mouthX: number, mouthY: number, eyeDistance: number];

export const MOUTH_BOX = Object.freeze({ width: 1.5, above: 0.45, below: 0.85 });

export function paramsOf(d: FaceDetection, scale = 1): FaceParams {
  const re = d.keypoints[KEYPOINT.rightEye];
  const le = d.keypoints[KEYPOINT.leftEye];
  const m = d.keypoints[KEYPOINT.mouth];
  const eye = Math.hypot(re.x - le.x, re.y - le.y);
  return [(d.box.x + d.box.w / 2) * scale, (d.box.y + d.box.h / 2) * scale, Math.max(d.box.w, d.box.h) * scale, m.x * scale, m.y * scale, eye * scale];
}

export function frameOf(p: readonly number[]): FaceFrame {
  const [cx, cy, size, mx, my, eye] = p;
  return {
    face: { x: cx - size / 2, y: cy - size / 2, w: size, h: size },
    mouthCenter: { x: mx, y: my },
    eyeDistance: eye,
    mouth: { x: mx - (MOUTH_BOX.width / 2) * eye, y: my - MOUTH_BOX.above * eye, w: MOUTH_BOX.width * eye, h: (MOUTH_BOX.above + MOUTH_BOX.below) * eye },
  };
}
