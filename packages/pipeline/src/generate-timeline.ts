/**
 * The dubbed speech timeline: every fitted segment placed at its exact sample offset. Segments
 * are read from their files window by window and each file is open only while the renderer is
 * inside it, so a long video with thousands of lines holds neither all samples nor all files.
 * One job may hold segments at several sample rates (a 16 kHz Piper voice beside 22.05 kHz ones):
 * the timeline runs at the highest of them and every other segment is resampled to it first.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import { renderTimeline, resample, WavReader, type AudioSource, type MediaToolOptions, type Placement } from '@dub/media';
import type { StageContext } from '@dub/core';

/** A WAV opened on the first read and closed after its last frame was read. */
export class LazyWavSource implements AudioSource {
  private reader: Promise<WavReader> | undefined;

  constructor(
    readonly file: string,
    readonly sampleRate: number,
    readonly channelCount: number,
    readonly frames: number,
  ) {}

  async read(startFrame: number, frameCount: number): Promise<Float32Array[]> {
    this.reader ??= WavReader.open(this.file);
    const r = await this.reader;
    const out = await r.read(startFrame, frameCount);
    if (startFrame + frameCount >= this.frames) await this.close();
    return out;
  }

  async close(): Promise<void> {
    const r = this.reader;
    this.reader = undefined;
    if (r) await (await r).close();
  }
}

export interface TimelineEntry {
  file: string;
  /** Seconds from the start of the video. */
  start: number;
  frames: number;
  /** The file's sample rate (default: the timeline's). */
  sampleRate?: number;
}

/** A job's timeline rate: the highest rate among its segments (no segment loses bandwidth), `fallback` when there are none. */
export function timelineSampleRate(rates: readonly number[], fallback: number): number {
  let best = 0;
  for (const r of rates) if (r > best) best = r;
  return best > 0 ? best : fallback;
}

/**
 * Render mono speech at `sampleRate` for `durationSeconds` into `output`; returns its frame count.
 * Entries at another rate are resampled (ffmpeg) into a folder beside `output`, removed afterwards.
 */
export async function renderSpeechTimeline(
  output: string,
  entries: readonly TimelineEntry[],
  sampleRate: number,
  durationSeconds: number,
  ctx: StageContext,
  media: MediaToolOptions = {},
): Promise<number> {
  let convDir: string | undefined;
  const sources: LazyWavSource[] = [];
  try {
    for (const [i, e] of entries.entries()) {
      if (e.sampleRate === undefined || e.sampleRate === sampleRate) {
        sources.push(new LazyWavSource(e.file, sampleRate, 1, e.frames));
        continue;
      }
      convDir ??= await fsp.mkdtemp(path.join(path.dirname(output), 'rates-'));
      const info = await resample(e.file, path.join(convDir, `${i}.wav`), { ...media, sampleRate, channels: 1, format: 'float32' }, ctx);
      sources.push(new LazyWavSource(info.file, sampleRate, 1, info.frames));
    }
    const placements: Placement[] = entries.map((e, i) => ({ atFrame: Math.round(e.start * sampleRate), audio: sources[i]! }));
    const r = await renderTimeline(output, { sampleRate, channels: 1, frames: Math.round(durationSeconds * sampleRate), format: 'float32' }, placements, ctx);
    return r.frames;
  } finally {
    await Promise.all(sources.map((s) => s.close()));
    if (convDir) await fsp.rm(convDir, { recursive: true, force: true });
  }
}
