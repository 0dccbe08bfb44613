/**
 * Loudness of a speech track per video frame: the RMS level (dBFS) of the 16 kHz mono audio in a
 * window around each frame's centre. Read window by window from a WAV on disk, so memory does not
 * grow with the track's length.
 */
import path from 'node:path';
import { resolveContext, type PartialContext } from '@dub/core';
import { extractAudio, WavReader, type MediaToolOptions } from '@dub/media';

export const ENVELOPE_SAMPLE_RATE = 16000;

/** Convert any audio (or a video's audio) to a 16 kHz mono float WAV in `dir`. */
export async function speechWav(input: string, dir: string, name: string, media: MediaToolOptions, context: PartialContext = {}): Promise<string> {
  const out = path.join(dir, `${name}-16k.wav`);
  const ctx = resolveContext(context);
  // a few seconds at most: no progress of its own (the caller's range belongs to the frames)
  await extractAudio(input, out, { ...media, sampleRate: ENVELOPE_SAMPLE_RATE, channels: 1, format: 'float32' }, { logger: ctx.logger, ...(ctx.signal ? { signal: ctx.signal } : {}) });
  return out;
}

/**
 * dBFS per video frame (frame i centred at (i + 0.5) / fps, or half a frame after `times[i]` for a
 * variable frame rate), over a window of `windowFrames` video frames (default 1.5); -120 where the
 * audio has ended.
 */
export async function frameLevels(wav: string, fps: number, frameCount: number, windowFrames = 1.5, times?: ArrayLike<number>): Promise<Float32Array> {
  const reader = await WavReader.open(wav);
  try {
    const sr = reader.sampleRate;
    // the centre of frame i in samples
    const centre = (i: number): number => (times && i < times.length ? Math.round((times[i]! + 0.5 / fps) * sr) : Math.round(((i + 0.5) * sr) / fps));
    const half = Math.max(1, Math.round((windowFrames * sr) / fps / 2));
    const out = new Float32Array(frameCount).fill(-120);
    const chunkFrames = Math.max(1, Math.floor((sr * 10) / Math.max(1, sr / fps))); // ~10 s of video per read
    for (let f0 = 0; f0 < frameCount; f0 += chunkFrames) {
      const f1 = Math.min(frameCount, f0 + chunkFrames);
      const a = Math.max(0, centre(f0) - half);
      const b = Math.min(reader.frames, centre(f1 - 1) + half);
      if (b <= a) continue;
      const x = (await reader.read(a, b - a))[0];
      for (let i = f0; i < f1; i++) {
        const c = centre(i);
        const lo = Math.max(a, c - half);
        const hi = Math.min(b, c + half);
        if (hi <= lo) continue;
        let e = 0;
        for (let n = lo; n < hi; n++) e += x[n - a] * x[n - a];
        out[i] = 10 * Math.log10(e / (hi - lo) + 1e-12);
      }
    }
    return out;
  } finally {
    await reader.close();
  }
}
