/**
 * The dubbed speech timeline: every fitted segment placed at its exact sample offset. Segments
 * are read from their files window by window and each file is open only while the renderer is
 * inside it, so a long video with thousands of lines holds neither all samples nor all files.
 */
import { renderTimeline, WavReader, type AudioSource, type Placement } from '@dub/media';
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
}

/** Render mono speech at `sampleRate` for `durationSeconds` into `output`; returns its frame count. */
export async function renderSpeechTimeline(output: string, entries: readonly TimelineEntry[], sampleRate: number, durationSeconds: number, ctx: StageContext): Promise<number> {
  const sources = entries.map((e) => new LazyWavSource(e.file, sampleRate, 1, e.frames));
  const placements: Placement[] = entries.map((e, i) => ({ atFrame: Math.round(e.start * sampleRate), audio: sources[i]! }));
  try {
    const r = await renderTimeline(output, { sampleRate, channels: 1, frames: Math.round(durationSeconds * sampleRate), format: 'float32' }, placements, ctx);
    return r.frames;
  } finally {
    await Promise.all(sources.map((s) => s.close()));
  }
}
