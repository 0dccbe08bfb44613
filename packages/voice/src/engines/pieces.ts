/** The engines' last step: the pieces of a line (clauses, sentences, chunks) joined into one mono track. */
import type { PlanarAudio } from '@dub/media';
import { applyTimbre } from '../matching/timbre.js';

/** `pieces` one after the other as mono audio, with the voice's timbre gains applied when it has some. */
export function joinPieces(pieces: readonly Float32Array[], sampleRate: number, timbre?: readonly number[]): PlanarAudio {
  const samples = new Float32Array(pieces.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of pieces) {
    samples.set(p, at);
    at += p.length;
  }
  return { sampleRate, channels: [timbre ? applyTimbre(samples, sampleRate, timbre) : samples] };
}
