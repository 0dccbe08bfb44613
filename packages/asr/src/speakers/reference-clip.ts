/**
 * A speaker's reference clip for voice cloning: its cleanest stretch of speech. Turns are scored by
 * length times mean VAD probability (long, confident, uninterrupted speech first); the best are
 * taken until the clip reaches `minSeconds`, and cut at `maxSeconds`. Pieces are joined in time
 * order with 50 ms of silence between them.
 */
import { round3 } from '../asr/text-words.js';
import type { SpeechAudio } from '../speech-audio.js';
import { SPEECH_SAMPLE_RATE } from '../speech-audio.js';
import type { SpeakerTurn } from './resegment.js';

export interface ClipPiece {
  start: number;
  end: number;
}

function meanProbability(probs: Float32Array, frameSeconds: number, a: number, b: number): number {
  const i0 = Math.max(0, Math.floor(a / frameSeconds));
  const i1 = Math.min(probs.length, Math.ceil(b / frameSeconds));
  if (i1 <= i0) return 0;
  let s = 0;
  for (let i = i0; i < i1; i++) s += probs[i]!;
  return s / (i1 - i0);
}

export function chooseClipPieces(turns: readonly SpeakerTurn[], speaker: number, probs: Float32Array, frameSeconds: number, minSeconds: number, maxSeconds: number): ClipPiece[] {
  const mine = turns
    .filter((t) => t.speaker === speaker)
    .map((t) => {
      // Trim 50 ms at each side: turn edges are where the other voice or the pause bleeds in.
      const start = t.end - t.start > 0.5 ? t.start + 0.05 : t.start;
      const end = t.end - t.start > 0.5 ? t.end - 0.05 : t.end;
      const p = probs.length ? meanProbability(probs, frameSeconds, start, end) : 1;
      return { start, end, score: (end - start) * p * p };
    })
    .sort((a, b) => b.score - a.score);
  const pieces: ClipPiece[] = [];
  let total = 0;
  for (const t of mine) {
    if (total >= minSeconds) break;
    const take = Math.min(t.end - t.start, maxSeconds - total);
    if (take <= 0) break;
    pieces.push({ start: round3(t.start), end: round3(t.start + take) });
    total += take;
  }
  return pieces.sort((a, b) => a.start - b.start);
}

export async function renderClip(audio: SpeechAudio, pieces: readonly ClipPiece[]): Promise<Float32Array> {
  const gap = Math.round(0.05 * SPEECH_SAMPLE_RATE);
  const parts = await Promise.all(pieces.map((p) => audio.readSeconds(p.start, p.end)));
  const n = parts.reduce((s, p) => s + p.length, 0) + gap * Math.max(0, parts.length - 1);
  const out = new Float32Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length + gap;
  }
  return out;
}
