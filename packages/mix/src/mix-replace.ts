/**
 * Replace mix: the separated background plus the dubbed speech timeline (the original speech is
 * gone), summed at exact sample positions, loudness-normalised with a true-peak limiter.
 * Length: `durationSeconds`, default the speech timeline's.
 */
import path from 'node:path';
import { resolveContext, subContext, type PartialContext } from '@dub/core';
import { renderTimeline, resample, WavReader } from '@dub/media';
import { normalizeLoudness } from './normalize.js';
import { dbToGain, inMixDir, mixInput, resolveMixOutput, type MixOutputOptions } from './options.js';
import type { MixResult } from './mix-result.js';

export interface MixReplaceOptions extends MixOutputOptions {
  /** Background track (any audio file ffmpeg reads). */
  background: string;
  /** Dubbed speech timeline (WAV or any audio), starting at time 0 of the video. */
  speech: string;
  /** Gain of the background, dB (default 0: as separated). */
  backgroundGainDb?: number;
}

export async function mixReplace(options: MixReplaceOptions, context: PartialContext = {}): Promise<MixResult> {
  const ctx = resolveContext(context);
  const o = resolveMixOutput(options);
  return inMixDir(o, async (dir, fmt) => {
    const bgFile = path.join(dir, 'background.wav');
    const spFile = path.join(dir, 'speech.wav');
    const bgInput = await mixInput(options.background, fmt, bgFile, subContext(ctx, 'mix_prepare', 0, 0.1));
    const sp = await resample(options.speech, spFile, fmt, subContext(ctx, 'mix_prepare', 0.1, 0.2));
    const frames = Math.round((o.durationSeconds ?? sp.duration) * o.sampleRate);
    const premix = path.join(dir, 'premix.wav');
    const bg = await WavReader.open(bgInput);
    const speech = await WavReader.open(spFile);
    try {
      await renderTimeline(
        premix,
        { sampleRate: o.sampleRate, channels: o.channels, frames, format: 'float32' },
        [
          { atFrame: 0, audio: bg, gain: dbToGain(options.backgroundGainDb ?? 0) },
          { atFrame: 0, audio: speech, gain: dbToGain(o.speechGainDb) },
        ],
        subContext(ctx, 'mix_sum', 0.2, 0.5),
      );
    } finally {
      await bg.close();
      await speech.close();
    }
    const n = await normalizeLoudness(premix, o.output, { target: o.loudness, sampleRate: o.sampleRate, channels: o.channels, frames, format: o.format, previousGainDb: o.previousGainDb, gainToleranceDb: o.gainToleranceDb, media: o.media }, subContext(ctx, 'mix_loudness', 0.5, 1));
    return { output: o.output, sampleRate: o.sampleRate, channels: o.channels, frames, durationSeconds: frames / o.sampleRate, inputIntegrated: n.inputIntegrated, gainDb: n.gainDb, exactGainDb: n.exactGainDb, gainKept: n.gainKept, ...(n.hops ? { hops: n.hops } : {}) };
  });
}
