/**
 * Pitch-preserving time-stretch of mono audio through ffmpeg: the rubberband filter (phase
 * vocoder with transient handling; best quality) when this ffmpeg has it, else atempo (WSOLA).
 */
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { resolveContext, ValidationError, type PartialContext } from '@dub/core';
import { readWav, runFfmpeg, writeWav, type MediaToolOptions, type PlanarAudio } from '@dub/media';

export type Stretcher = 'rubberband' | 'atempo';

/** Which stretchers this ffmpeg offers, best first (empty when neither). */
export async function detectStretchers(media: MediaToolOptions = {}, context: PartialContext = {}): Promise<Stretcher[]> {
  const res = await runFfmpeg(['-filters'], { ...media, progress: false, logLevel: 'quiet' }, context);
  const names = new Set(
    res.stdout
      .toString('utf8')
      .split('\n')
      .map((l) => l.trim().split(/\s+/)[1])
      .filter((n): n is string => !!n),
  );
  return (['rubberband', 'atempo'] as const).filter((s) => names.has(s));
}

export interface StretchOptions {
  stretcher: Stretcher;
  media?: MediaToolOptions;
  tmpDir?: string;
}

/** atempo takes 0.5..100 per instance; chain instances for slower tempos. */
function atempoChain(tempo: number): string {
  const parts: string[] = [];
  let t = tempo;
  while (t < 0.5) {
    parts.push('atempo=0.5');
    t /= 0.5;
  }
  parts.push(`atempo=${t.toFixed(6)}`);
  return parts.join(',');
}

/** Play `audio` `tempo` times as fast (2 = half the duration) without changing its pitch. */
export async function timeStretch(audio: PlanarAudio, tempo: number, opts: StretchOptions, context: PartialContext = {}): Promise<PlanarAudio> {
  if (!(tempo > 0.05 && tempo < 20)) throw new ValidationError(`tempo ${tempo} out of range`);
  const ctx = resolveContext(context);
  const dir = await fsp.mkdtemp(path.join(opts.tmpDir ?? os.tmpdir(), 'dub-stretch-'));
  try {
    const input = path.join(dir, 'in.wav');
    const output = path.join(dir, 'out.wav');
    await writeWav(input, audio, { format: 'float32' });
    const filter = opts.stretcher === 'rubberband' ? `rubberband=tempo=${tempo.toFixed(6)}:pitchq=quality:window=standard` : atempoChain(tempo);
    await runFfmpeg(['-i', input, '-af', filter, '-ar', String(audio.sampleRate), '-c:a', 'pcm_f32le', '-f', 'wav', output], { ...opts.media, stage: 'time_stretch', progress: false }, ctx);
    const out = await readWav(output);
    return { sampleRate: out.sampleRate, channels: out.channels };
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
  }
}
