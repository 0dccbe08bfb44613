/**
 * BlazeFace output decoding and weighted non-maximum suppression (MediaPipe's
 * TensorsToDetections + NonMaxSuppression with the `WEIGHTED` algorithm): each anchor's 16
 * regressors are box centre offset (x, y), box size (w, h) and six keypoints (x, y), all in input
 * pixels relative to the anchor; scores are logits. Overlapping candidates are merged into their
 * score-weighted mean, so the box does not jump between neighbouring anchors frame to frame.
 */
import type { Anchor } from './anchors.js';

export interface Point {
  x: number;
  y: number;
}

/** One face, in normalised [0, 1] detector-input coordinates until mapped back. */
export interface Detection {
  /** Box centre and size. */
  cx: number;
  cy: number;
  w: number;
  h: number;
  /** right eye, left eye, nose tip, mouth centre, right ear tragion, left ear tragion (the person's right and left). */
  keypoints: Point[];
  score: number;
}

export const KEYPOINT = Object.freeze({ rightEye: 0, leftEye: 1, nose: 2, mouth: 3, rightEar: 4, leftEar: 5 });

const SCORE_CLIP = 100;

function sigmoid(x: number): number {
  const c = x < -SCORE_CLIP ? -SCORE_CLIP : x > SCORE_CLIP ? SCORE_CLIP : x;
  return 1 / (1 + Math.exp(-c));
}

/**
 * Candidates above `minScore` from the raw scores (one logit per anchor) and regressors (16 per
 * anchor) of a model with a square input of `size` pixels.
 */
export function decodeDetections(scores: Float32Array, regressors: Float32Array, anchors: readonly Anchor[], size: number, minScore: number): Detection[] {
  if (scores.length !== anchors.length || regressors.length !== anchors.length * 16) {
    throw new RangeError(`BlazeFace outputs do not match ${anchors.length} anchors: ${scores.length} scores, ${regressors.length} regressors`);
  }
  const out: Detection[] = [];
  for (let i = 0; i < anchors.length; i++) {
    const score = sigmoid(scores[i]);
    if (score < minScore) continue;
    const a = anchors[i];
    const r = i * 16;
    const keypoints: Point[] = [];
    for (let k = 0; k < 6; k++) keypoints.push({ x: a.x + regressors[r + 4 + k * 2] / size, y: a.y + regressors[r + 5 + k * 2] / size });
    out.push({ cx: a.x + regressors[r] / size, cy: a.y + regressors[r + 1] / size, w: regressors[r + 2] / size, h: regressors[r + 3] / size, keypoints, score });
  }
  return out;
}

export function iou(a: Detection, b: Detection): number {
  const ax0 = a.cx - a.w / 2;
  const ay0 = a.cy - a.h / 2;
  const bx0 = b.cx - b.w / 2;
  const by0 = b.cy - b.h / 2;
  const ix = Math.max(0, Math.min(ax0 + a.w, bx0 + b.w) - Math.max(ax0, bx0));
  const iy = Math.max(0, Math.min(ay0 + a.h, by0 + b.h) - Math.max(ay0, by0));
  const inter = ix * iy;
  const union = a.w * a.h + b.w * b.h - inter;
  return union > 0 ? inter / union : 0;
}

/**
 * Weighted NMS: take the best remaining candidate, merge every candidate overlapping it by at
 * least `iouThreshold` into the score-weighted mean of their boxes and keypoints (score: the
 * best's), repeat. Returns faces by descending score.
 */
export function weightedNms(candidates: readonly Detection[], iouThreshold = 0.3): Detection[] {
  let rest = [...candidates].sort((p, q) => q.score - p.score);
  const out: Detection[] = [];
  while (rest.length) {
    const best = rest[0];
    const group: Detection[] = [];
    const keep: Detection[] = [];
    for (const d of rest) (iou(best, d) >= iouThreshold ? group : keep).push(d);
    rest = keep;
    let total = 0;
    const m = { cx: 0, cy: 0, w: 0, h: 0, kp: new Array<number>(12).fill(0) };
    for (const d of group) {
      total += d.score;
      m.cx += d.cx * d.score;
      m.cy += d.cy * d.score;
      m.w += d.w * d.score;
      m.h += d.h * d.score;
      d.keypoints.forEach((p, k) => {
        m.kp[k * 2] += p.x * d.score;
        m.kp[k * 2 + 1] += p.y * d.score;
      });
    }
    out.push({
      cx: m.cx / total,
      cy: m.cy / total,
      w: m.w / total,
      h: m.h / total,
      keypoints: Array.from({ length: 6 }, (_, k) => ({ x: m.kp[k * 2] / total, y: m.kp[k * 2 + 1] / total })),
      score: best.score,
    });
  }
  return out;
}
