/**
 * Cutting speech regions into decoder-sized pieces: long regions are split into equal parts no
 * longer than `max` seconds, and (for Whisper) neighbouring regions are grouped into chunks of at
 * most `max` seconds so every chunk boundary falls in a pause.
 */
import type { SpeechRegion } from '../vad/types.js';

export function splitLongRegions(regions: readonly SpeechRegion[], max: number): SpeechRegion[] {
  const out: SpeechRegion[] = [];
  for (const r of regions) {
    const len = r.end - r.start;
    const parts = Math.max(1, Math.ceil(len / max - 1e-9));
    for (let i = 0; i < parts; i++) out.push({ start: r.start + (len * i) / parts, end: r.start + (len * (i + 1)) / parts, probability: r.probability });
  }
  return out;
}

export interface AudioChunk {
  /** Seconds: the audio decoded for this chunk. */
  start: number;
  end: number;
  regions: SpeechRegion[];
}

/** Group regions into chunks spanning at most `max` seconds (from the first region's start to the last one's end). */
export function groupRegions(regions: readonly SpeechRegion[], max: number): AudioChunk[] {
  const chunks: AudioChunk[] = [];
  for (const r of splitLongRegions(regions, max)) {
    const cur = chunks[chunks.length - 1];
    if (cur && r.end - cur.start <= max) {
      cur.end = r.end;
      cur.regions.push(r);
    } else chunks.push({ start: r.start, end: r.end, regions: [r] });
  }
  return chunks;
}
