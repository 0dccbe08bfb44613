/**
 * Clean tracks given with the asset (background_url, speech_url or an uploaded background)
 * replace separation:
 *
 *  - both given: they are used as they are;
 *  - one given: the other is derived as `mix - given`, sample by sample. This is exact only when
 *    the mix really is speech + background, sample-aligned and at the same gain; any offset,
 *    gain or processing difference leaves a residue of the given track in the derived one.
 *
 * The derived track has the mix's sample rate, channel count and length: the given track is
 * cut or zero-padded to the mix's length, a mono given track is applied to every channel of the
 * mix, and a multichannel one is averaged onto a mono mix. Files are processed in windows.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { loadConfig, reportProgress, resolveContext, throwIfAborted, ValidationError, type PartialContext, type StageContext } from '@dub/core';
import { frameCount, resample, WavReader, WavWriter, type AudioSource, type PlanarAudio, type WavWriteFormat } from '@dub/media';
import type { SeparationConfig } from './options.js';
import type { SeparatedAudio, SeparatedFiles } from './types.js';

export interface GivenTracksInput<T extends PlanarAudio | string> {
  mix: T;
  speech?: T;
  background?: T;
}

export interface FromGivenTracksOptions {
  /** For files: where a derived speech track goes (default `<mix>.speech.wav`). */
  speechPath?: string;
  /** For files: where a derived background track goes (default `<mix>.background.wav`). */
  backgroundPath?: string;
  /** For files: sample encoding of the derived track (default float32). */
  format?: WavWriteFormat;
  /** For files: where a given track is converted to the mix's rate when they differ. */
  tmpDir?: string;
  ffmpegPath?: string;
  config?: SeparationConfig;
}

const WINDOW = 1 << 16;
const STAGE = 'separation';

export function fromGivenTracks(input: GivenTracksInput<PlanarAudio>, options?: FromGivenTracksOptions, ctx?: PartialContext): Promise<SeparatedAudio>;
export function fromGivenTracks(input: GivenTracksInput<string>, options?: FromGivenTracksOptions, ctx?: PartialContext): Promise<SeparatedFiles>;
export async function fromGivenTracks(input: GivenTracksInput<PlanarAudio | string>, options: FromGivenTracksOptions = {}, context: PartialContext = {}): Promise<SeparatedAudio | SeparatedFiles> {
  const ctx = resolveContext(context);
  const { mix, speech, background } = input;
  if (speech === undefined && background === undefined) throw new ValidationError('fromGivenTracks needs a speech or a background track', { field: 'given' });
  const kinds = [mix, speech, background].filter((x) => x !== undefined).map((x) => typeof x);
  if (new Set(kinds).size !== 1) throw new ValidationError('the mix and the given tracks must all be files or all be audio in memory', { field: 'given' });
  throwIfAborted(ctx.signal);
  if (typeof mix === 'string') return givenFiles(mix, speech as string | undefined, background as string | undefined, options, ctx);
  return givenAudio(mix, speech as PlanarAudio | undefined, background as PlanarAudio | undefined, ctx);
}

async function givenAudio(mix: PlanarAudio, speech: PlanarAudio | undefined, background: PlanarAudio | undefined, ctx: StageContext): Promise<SeparatedAudio> {
  if (speech && background) {
    reportProgress(ctx, STAGE, 1, 'given tracks');
    return { speech, background };
  }
  const given = (speech ?? background)!;
  if (given.channels.length === 0) throw new ValidationError('the given track has no channels', { field: speech ? 'speech' : 'background' });
  if (given.sampleRate !== mix.sampleRate) {
    throw new ValidationError(`the given ${speech ? 'speech' : 'background'} track is at ${given.sampleRate} Hz and the mix at ${mix.sampleRate} Hz; resample it first`, { field: speech ? 'speech' : 'background' });
  }
  const frames = frameCount(mix.channels);
  const derived: Float32Array[] = mix.channels.map(() => new Float32Array(frames));
  subtract(mix.channels, given.channels, derived, frames);
  reportProgress(ctx, STAGE, 1, 'derived from given track');
  const other = { sampleRate: mix.sampleRate, channels: derived };
  return speech ? { speech, background: other } : { speech: other, background: background! };
}

/** out[c][i] = mix[c][i] - given mapped onto the mix's channels (missing samples are zero). */
function subtract(mix: readonly Float32Array[], given: readonly Float32Array[], out: Float32Array[], n: number): void {
  const gc = given.length;
  for (let c = 0; c < mix.length; c++) {
    const m = mix[c]!;
    const o = out[c]!;
    if (mix.length === 1 && gc > 1) {
      const g0 = given[0]!;
      const avail = Math.min(n, g0.length);
      for (let i = 0; i < avail; i++) {
        let s = 0;
        for (let k = 0; k < gc; k++) s += given[k]![i]!;
        o[i] = m[i]! - s / gc;
      }
      for (let i = avail; i < n; i++) o[i] = m[i]!;
      continue;
    }
    const g = given[Math.min(c, gc - 1)]!;
    const avail = Math.min(n, g.length);
    for (let i = 0; i < avail; i++) o[i] = m[i]! - g[i]!;
    for (let i = avail; i < n; i++) o[i] = m[i]!;
  }
}

async function givenFiles(mix: string, speech: string | undefined, background: string | undefined, options: FromGivenTracksOptions, ctx: StageContext): Promise<SeparatedFiles> {
  if (speech && background) {
    reportProgress(ctx, STAGE, 1, 'given tracks');
    return { speech, background };
  }
  const givenPath = (speech ?? background)!;
  const outPath = speech
    ? options.backgroundPath ?? defaultTrackPath(mix, 'background')
    : options.speechPath ?? defaultTrackPath(mix, 'speech');
  const mixReader = await WavReader.open(mix);
  let givenReader: WavReader | undefined;
  let converted: string | undefined;
  try {
    givenReader = await WavReader.open(givenPath);
    if (givenReader.sampleRate !== mixReader.sampleRate) {
      await givenReader.close();
      const config = options.config ?? loadConfig();
      converted = path.join(options.tmpDir ?? config.tmpDir, `dub-given-${randomUUID()}.wav`);
      await resample(givenPath, converted, { sampleRate: mixReader.sampleRate, format: 'float32', ffmpegPath: options.ffmpegPath ?? config.ffmpegPath, config }, ctx);
      givenReader = await WavReader.open(converted);
    }
    await subtractFiles(mixReader, givenReader, outPath, options.format ?? 'float32', ctx);
  } finally {
    await mixReader.close();
    await givenReader?.close();
    if (converted) await fs.rm(converted, { force: true });
  }
  return speech ? { speech, background: outPath } : { speech: outPath, background: givenPath };
}

async function subtractFiles(mix: AudioSource, given: AudioSource, outPath: string, format: WavWriteFormat, ctx: StageContext): Promise<void> {
  const writer = await WavWriter.create(outPath, { sampleRate: mix.sampleRate, channels: mix.channelCount, format });
  const out: Float32Array[] = Array.from({ length: mix.channelCount }, () => new Float32Array(WINDOW));
  try {
    for (let start = 0; start < mix.frames; start += WINDOW) {
      throwIfAborted(ctx.signal);
      const n = Math.min(WINDOW, mix.frames - start);
      const m = await mix.read(start, n);
      const g = await given.read(start, n);
      const view = out.map((o) => o.subarray(0, n));
      subtract(m, g, view, n);
      await writer.write(view);
      reportProgress(ctx, STAGE, (start + n) / mix.frames, 'derived from given track');
    }
    await writer.close();
  } catch (e) {
    await writer.close().catch(() => undefined);
    await fs.rm(outPath, { force: true });
    throw e;
  }
}

export function defaultTrackPath(mix: string, track: 'speech' | 'background'): string {
  const ext = path.extname(mix);
  return path.join(path.dirname(mix), `${path.basename(mix, ext)}.${track}.wav`);
}
