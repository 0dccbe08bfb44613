/**
 * `separate()`: the stage's one call. Given clean tracks skip the model; the engine `none` (or a
 * plan of mode `none`) passes the mix through to one track; otherwise the engine (created for this
 * call, or the caller's `engineInstance`) splits the input into speech and background.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { resolveContext, ValidationError, type PartialContext, type StageContext } from '@dub/core';
import { resample, WavReader, WavWriter, type PlanarAudio } from '@dub/media';
import { MemorySink, planarSource } from './audio-io.js';
import type { TimeSpan } from './background.js';
import { keepOutsideSpeech } from './keep-outside-speech.js';
import { passThrough } from './plan-runner.js';
import type { ResolvedSeparateOptions } from './options.js';
import { defaultTrackPath, fromGivenTracks } from './given-tracks.js';
import { resolveSeparateOptions, type SeparateOptions } from './options.js';
import { loadSeparationEngine } from './registry.js';
import type { SeparatedAudio, SeparatedFiles } from './types.js';

/** Separate audio in memory (at the engine's rate, 44.1 kHz for htdemucs). */
export function separate(input: PlanarAudio, options?: SeparateOptions, ctx?: PartialContext): Promise<SeparatedAudio>;
/** Separate a WAV file (any rate) into two WAV files, streaming it in windows. */
export function separate(input: string, options?: SeparateOptions, ctx?: PartialContext): Promise<SeparatedFiles>;
export async function separate(input: PlanarAudio | string, options: SeparateOptions = {}, context: PartialContext = {}): Promise<SeparatedAudio | SeparatedFiles> {
  const ctx = resolveContext(context);
  const o = resolveSeparateOptions(options);
  if (o.given) {
    if (typeof input === 'string') {
      const { speech, background } = o.given;
      if ((speech !== undefined && typeof speech !== 'string') || (background !== undefined && typeof background !== 'string')) {
        throw new ValidationError('given tracks must be file paths when the input is a file', { field: 'given' });
      }
      return fromGivenTracks(
        { mix: input, ...(speech !== undefined ? { speech } : {}), ...(background !== undefined ? { background } : {}) },
        { ...(o.speechPath ? { speechPath: o.speechPath } : {}), ...(o.backgroundPath ? { backgroundPath: o.backgroundPath } : {}), format: o.format, tmpDir: o.engineOptions.tmpDir, ffmpegPath: o.engineOptions.ffmpegPath },
        ctx,
      );
    }
    const { speech, background } = o.given;
    if ((speech !== undefined && typeof speech === 'string') || (background !== undefined && typeof background === 'string')) {
      throw new ValidationError('given tracks must be audio in memory when the input is', { field: 'given' });
    }
    return fromGivenTracks({ mix: input, ...(speech !== undefined ? { speech } : {}), ...(background !== undefined ? { background } : {}) }, {}, ctx);
  }
  const tracks = await modelOrPassThrough(input, o, ctx);
  const speech = o.plan?.speech;
  if (!speech) return tracks;
  return typeof input === 'string' ? keepInFile(input, tracks as SeparatedFiles, speech, o, ctx) : keepInMemory(input, tracks as SeparatedAudio, speech, o, ctx);
}

/** The model's tracks, or the mix passed through to one of them (plan `none`, engine `none`). */
async function modelOrPassThrough(input: PlanarAudio | string, o: ResolvedSeparateOptions, ctx: StageContext): Promise<SeparatedAudio | SeparatedFiles> {
  if (o.plan?.mode === 'none') return withoutModel(input, o, o.plan.background ? 'background' : 'speech', ctx);
  if (o.engine === 'none' && !o.engineInstance) return withoutModel(input, o, 'speech', ctx);
  const engine = o.engineInstance ?? (await loadSeparationEngine(o.engine, o.engineOptions, ctx));
  const run = o.plan?.mode === 'spans' ? { spans: o.plan.spans } : {};
  try {
    if (typeof input === 'string') {
      return await engine.separate(
        { path: input, speechPath: o.speechPath ?? defaultTrackPath(input, 'speech'), backgroundPath: o.backgroundPath ?? defaultTrackPath(input, 'background'), format: o.format },
        ctx,
        run,
      );
    }
    return await engine.separate(input, ctx, run);
  } finally {
    if (!o.engineInstance) await engine.dispose();
  }
}

/** Only speech replaced, in memory: the background outside `speech` becomes the mix (same rate: the engines' 44.1 kHz). */
async function keepInMemory(input: PlanarAudio, tracks: SeparatedAudio, speech: readonly TimeSpan[], o: ResolvedSeparateOptions, ctx: StageContext): Promise<SeparatedAudio> {
  if (input.sampleRate !== tracks.background.sampleRate) throw new ValidationError(`audio in memory must be at ${tracks.background.sampleRate} Hz to keep it outside speech, got ${input.sampleRate} Hz`, { field: 'input' });
  const bg = planarSource(tracks.background);
  const sink = new MemorySink(2, bg.frames);
  const kept = await keepOutsideSpeech(planarSource(input), bg, speech, sink, o.keep, ctx.signal);
  ctx.logger.info({ kept }, 'background: the mix kept outside speech');
  return { speech: tracks.speech, background: { sampleRate: tracks.background.sampleRate, channels: sink.channels } };
}

/** Only speech replaced, in files: the background file is rewritten with the mix outside `speech` (the mix converted to its rate when needed). */
async function keepInFile(input: string, tracks: SeparatedFiles, speech: readonly TimeSpan[], o: ResolvedSeparateOptions, ctx: StageContext): Promise<SeparatedFiles> {
  const e = o.engineOptions;
  const kept = `${tracks.background}.keep-${randomUUID()}.wav`;
  let converted: string | undefined;
  const bg = await WavReader.open(tracks.background);
  let mix: WavReader | undefined;
  try {
    mix = await WavReader.open(input);
    if (mix.sampleRate !== bg.sampleRate) {
      // at most two channels, a mono mix left mono (ffmpeg's mono-to-stereo upmix is 3 dB down; a mono mix is duplicated here, as without a model)
      const channels = Math.min(2, mix.channelCount);
      await mix.close();
      mix = undefined;
      converted = path.join(e.tmpDir, `dub-separation-${randomUUID()}.wav`);
      await resample(input, converted, { sampleRate: bg.sampleRate, channels, format: 'float32', ffmpegPath: e.ffmpegPath, ffprobePath: e.ffprobePath }, { logger: ctx.logger, ...(ctx.signal ? { signal: ctx.signal } : {}) });
      mix = await WavReader.open(converted);
    }
    const writer = await WavWriter.create(kept, { sampleRate: bg.sampleRate, channels: 2, format: o.format });
    try {
      const r = await keepOutsideSpeech(mix, bg, speech, writer, o.keep, ctx.signal);
      await writer.close();
      ctx.logger.info({ kept: { ...r, replaced: r.replaced.length } }, 'background: the mix kept outside speech');
    } catch (err) {
      await writer.close().catch(() => undefined);
      await fs.rm(kept, { force: true });
      throw err;
    }
  } finally {
    await bg.close();
    await mix?.close();
    if (converted) await fs.rm(converted, { force: true });
  }
  await fs.rename(kept, tracks.background);
  return tracks;
}

/** Rate of the tracks written without a model: the engines' (44.1 kHz), as with one. */
const OUTPUT_RATE = 44100;

/** No model: the mix to one track, silence to the other (stereo, 44.1 kHz, the input's length). */
async function withoutModel(input: PlanarAudio | string, o: ResolvedSeparateOptions, mixTo: 'speech' | 'background', ctx: StageContext): Promise<SeparatedAudio | SeparatedFiles> {
  ctx.logger.info({ mixTo }, 'separation without a model');
  if (typeof input !== 'string') {
    if (input.sampleRate !== OUTPUT_RATE) throw new ValidationError(`audio in memory must be at ${OUTPUT_RATE} Hz, got ${input.sampleRate} Hz`, { field: 'input' });
    const source = planarSource(input);
    const speech = new MemorySink(2, source.frames);
    const background = new MemorySink(2, source.frames);
    await passThrough(source, { speech, background }, mixTo, ctx);
    return { speech: { sampleRate: OUTPUT_RATE, channels: speech.channels }, background: { sampleRate: OUTPUT_RATE, channels: background.channels } };
  }
  const speechPath = o.speechPath ?? defaultTrackPath(input, 'speech');
  const backgroundPath = o.backgroundPath ?? defaultTrackPath(input, 'background');
  let reader = await WavReader.open(input);
  let converted: string | undefined;
  try {
    if (reader.sampleRate !== OUTPUT_RATE) {
      await reader.close();
      const e = o.engineOptions;
      converted = path.join(e.tmpDir, `dub-separation-${randomUUID()}.wav`);
      await resample(input, converted, { sampleRate: OUTPUT_RATE, channels: Math.min(2, reader.channelCount), format: 'float32', ffmpegPath: e.ffmpegPath, ffprobePath: e.ffprobePath }, { logger: ctx.logger, ...(ctx.signal ? { signal: ctx.signal } : {}) });
      reader = await WavReader.open(converted);
    }
    const speech = await WavWriter.create(speechPath, { sampleRate: OUTPUT_RATE, channels: 2, format: o.format });
    const background = await WavWriter.create(backgroundPath, { sampleRate: OUTPUT_RATE, channels: 2, format: o.format });
    try {
      await passThrough(reader, { speech, background }, mixTo, ctx);
      await Promise.all([speech.close(), background.close()]);
    } catch (e) {
      await Promise.allSettled([speech.close(), background.close()]);
      await Promise.allSettled([fs.rm(speechPath, { force: true }), fs.rm(backgroundPath, { force: true })]);
      throw e;
    }
    return { speech: speechPath, background: backgroundPath };
  } finally {
    await reader.close();
    if (converted) await fs.rm(converted, { force: true });
  }
}
