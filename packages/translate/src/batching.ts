/** Split segments into batches bounded by a segment count and a character count. */
import type { SourceSegment } from './types.js';

export interface BatchLimits {
  maxSegments: number;
  maxChars: number;
}

/** Consecutive batches in input order; a single segment longer than maxChars gets a batch of its own. */
export function makeBatches<S extends SourceSegment>(segments: readonly S[], limits: BatchLimits): S[][] {
  const out: S[][] = [];
  let cur: S[] = [];
  let chars = 0;
  for (const s of segments) {
    const n = s.text.length;
    if (cur.length > 0 && (cur.length >= limits.maxSegments || chars + n > limits.maxChars)) {
      out.push(cur);
      cur = [];
      chars = 0;
    }
    cur.push(s);
    chars += n;
  }
  if (cur.length > 0) out.push(cur);
  return out;
}
