/**
 * Where windows come from and where separated samples go: planar audio in memory or WAV files
 * through @dub/media's streaming reader and writer, behind the same two small interfaces.
 */
import { ValidationError } from '@dub/core';
import { frameCount, type AudioSource, type PlanarAudio } from '@dub/media';

export type { AudioSource } from '@dub/media';

/** Receives consecutive planar blocks; may keep no reference to them after returning. */
export interface AudioSink {
  write(channels: readonly Float32Array[]): Promise<void> | void;
}

/** Planar audio in memory as an AudioSource (windows are views, not copies). */
export function planarSource(audio: PlanarAudio): AudioSource {
  if (audio.channels.length === 0) throw new ValidationError('audio has no channels', { field: 'input' });
  const frames = frameCount(audio.channels);
  return {
    sampleRate: audio.sampleRate,
    channelCount: audio.channels.length,
    frames,
    read(start: number, count: number): Promise<Float32Array[]> {
      const s = Math.min(frames, Math.max(0, start));
      const e = Math.min(frames, s + Math.max(0, count));
      return Promise.resolve(audio.channels.map((c) => c.subarray(s, e)));
    },
  };
}

/** Collects everything written into `channels` arrays of `frames` samples. */
export class MemorySink implements AudioSink {
  readonly channels: Float32Array[];
  private at = 0;

  constructor(channelCount: number, frames: number) {
    this.channels = Array.from({ length: channelCount }, () => new Float32Array(frames));
  }

  write(block: readonly Float32Array[]): void {
    const n = block[0]?.length ?? 0;
    for (let c = 0; c < this.channels.length; c++) this.channels[c]!.set(block[c]!.subarray(0, n), this.at);
    this.at += n;
  }

  get written(): number {
    return this.at;
  }
}
