/**
 * Feathered elliptical mask of a rectangle: 1 inside the inner ellipse, falling smoothly to 0 at
 * the ellipse inscribed in the rectangle (so nothing outside the rectangle is touched).
 */
import type { Rect } from './rgb-image.js';

export function smoothstep(e0: number, e1: number, x: number): number {
  const t = Math.min(1, Math.max(0, (x - e0) / (e1 - e0)));
  return t * t * (3 - 2 * t);
}

/** Mask weight at pixel centre (x, y); `feather` is the soft fraction of the radius (0..1). */
export function featherWeight(rect: Rect, feather: number, x: number, y: number): number {
  const dx = (x - (rect.x + rect.w / 2)) / (rect.w / 2);
  const dy = (y - (rect.y + rect.h / 2)) / (rect.h / 2);
  const r = Math.sqrt(dx * dx + dy * dy);
  return 1 - smoothstep(1 - feather, 1, r);
}
