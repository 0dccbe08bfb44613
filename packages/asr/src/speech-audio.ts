/**
 * The audio every stage of this package reads: mono 16 kHz, served in windows so long files are
 * never held in memory. Built from a media file path (a 16 kHz WAV is read in place; anything else
 * is converted once by ffmpeg into a temporary WAV), or from samples in memory (resampled here).
 * Open it once and hand the same SpeechAudio to detectSpeech, transcribe and diarize.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { resolveContext, type PartialContext } from '@dub/core';
import { extractAudio, WavReader, writeWav, type MediaToolOptions, type PlanarAudio } from '@dub/media';
import { downmix, resampleSinc } from './dsp/resample.js';

export const SPEECH_SAMPLE_RATE = 16000;

/** Mono samples in memory at any rate. */
export interface MonoAudio {
  samples: Float32Array;
  sampleRate: number;
}

/** A media file path, planar audio (any rate, any channels), mono samples, or an open SpeechAudio. */
export type AudioInput = string | PlanarAudio | MonoAudio | SpeechAudio;

export interface SpeechAudioOptions extends MediaToolOptions {
  /** Where temporary WAVs go (default the OS temp dir). */
  tmpDir?: string;
}

export abstract class SpeechAudio {
  readonly sampleRate = SPEECH_SAMPLE_RATE;
  abstract readonly frames: number;
  get duration(): number {
    return this.frames / SPEECH_SAMPLE_RATE;
  }
  /** Mono samples [startFrame, startFrame + count), clipped to the audio. */
  abstract read(startFrame: number, count: number): Promise<Float32Array>;
  /** Samples between two times in seconds. */
  readSeconds(start: number, end: number): Promise<Float32Array> {
    const s = Math.max(0, Math.round(start * SPEECH_SAMPLE_RATE));
    const e = Math.min(this.frames, Math.round(end * SPEECH_SAMPLE_RATE));
    return this.read(s, Math.max(0, e - s));
  }
  /** Path of a mono 16 kHz 16-bit WAV of this audio (written to a temp file on first use when needed). */
  abstract wavFile(): Promise<string>;
  abstract close(): Promise<void>;
  /** Iterate windows of `windowFrames` samples. */
  async *windows(windowFrames: number): AsyncGenerator<{ startFrame: number; samples: Float32Array }> {
    for (let s = 0; s < this.frames; s += windowFrames) yield { startFrame: s, samples: await this.read(s, Math.min(windowFrames, this.frames - s)) };
  }
}

class TempDir {
  private dir: Promise<string> | undefined;
  constructor(private readonly base: string) {}
  get(): Promise<string> {
    this.dir ??= mkdtemp(path.join(this.base, 'dub-asr-'));
    return this.dir;
  }
  async remove(): Promise<void> {
    if (!this.dir) return;
    const d = await this.dir.catch(() => undefined);
    this.dir = undefined;
    if (d) await rm(d, { recursive: true, force: true });
  }
}

class MemorySpeechAudio extends SpeechAudio {
  private file: Promise<string> | undefined;
  constructor(private readonly samples: Float32Array, private readonly tmp: TempDir) {
    super();
  }
  get frames(): number {
    return this.samples.length;
  }
  async read(startFrame: number, count: number): Promise<Float32Array> {
    const s = Math.max(0, Math.min(startFrame, this.samples.length));
    return this.samples.slice(s, Math.min(this.samples.length, s + Math.max(0, count)));
  }
  wavFile(): Promise<string> {
    this.file ??= (async () => {
      const f = path.join(await this.tmp.get(), 'speech.wav');
      await writeWav(f, { sampleRate: SPEECH_SAMPLE_RATE, channels: [this.samples] }, { format: 'pcm16' });
      return f;
    })();
    return this.file;
  }
  async close(): Promise<void> {
    await this.tmp.remove();
  }
}

class WavSpeechAudio extends SpeechAudio {
  private file: Promise<string> | undefined;
  constructor(private readonly reader: WavReader, private readonly tmp: TempDir, private readonly direct: boolean) {
    super();
  }
  get frames(): number {
    return this.reader.frames;
  }
  async read(startFrame: number, count: number): Promise<Float32Array> {
    return downmix(await this.reader.read(Math.max(0, startFrame), Math.max(0, count)));
  }
  wavFile(): Promise<string> {
    this.file ??= (async () => {
      if (this.direct) return this.reader.file;
      const f = path.join(await this.tmp.get(), 'speech-pcm16.wav');
      await writeWav(f, { sampleRate: SPEECH_SAMPLE_RATE, channels: [await this.read(0, this.frames)] }, { format: 'pcm16' });
      return f;
    })();
    return this.file;
  }
  async close(): Promise<void> {
    await this.reader.close();
    await this.tmp.remove();
  }
}

function isPlanar(x: object): x is PlanarAudio {
  return Array.isArray((x as PlanarAudio).channels);
}

/**
 * Open `input` as mono 16 kHz speech audio. The caller closes what it opened; stages given a
 * SpeechAudio use it as is and leave it open.
 */
export async function openSpeechAudio(input: AudioInput, opts: SpeechAudioOptions = {}, context: PartialContext = {}): Promise<SpeechAudio> {
  if (input instanceof SpeechAudio) return input;
  const tmp = new TempDir(opts.tmpDir ?? os.tmpdir());
  if (typeof input !== 'string') {
    const mono = isPlanar(input) ? downmix(input.channels) : input.samples;
    return new MemorySpeechAudio(resampleSinc(mono, input.sampleRate, SPEECH_SAMPLE_RATE), tmp);
  }
  const ctx = resolveContext(context);
  let reader: WavReader | undefined;
  try {
    reader = await WavReader.open(input);
  } catch {
    reader = undefined; // not a WAV we read directly: ffmpeg converts it below
  }
  if (reader && reader.sampleRate === SPEECH_SAMPLE_RATE) {
    const direct = reader.channelCount === 1 && reader.sampleFormat === 'pcm16';
    return new WavSpeechAudio(reader, tmp, direct);
  }
  await reader?.close();
  try {
    const out = path.join(await tmp.get(), 'speech.wav');
    await extractAudio(input, out, { ...opts, sampleRate: SPEECH_SAMPLE_RATE, channels: 1, format: 'pcm16' }, ctx);
    return new WavSpeechAudio(await WavReader.open(out), tmp, true);
  } catch (e) {
    await tmp.remove();
    throw e;
  }
}

/** Run `fn` with `input` opened as SpeechAudio, closing it afterwards only if this call opened it. */
export async function withSpeechAudio<T>(input: AudioInput, opts: SpeechAudioOptions, context: PartialContext, fn: (a: SpeechAudio) => Promise<T>): Promise<T> {
  const audio = await openSpeechAudio(input, opts, context);
  try {
    return await fn(audio);
  } finally {
    if (audio !== input) await audio.close();
  }
}
