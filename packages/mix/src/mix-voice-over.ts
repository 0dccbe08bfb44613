/**
 * Voice-over mix (the contract's voice_over): the original audio stays, lowered by `duckDb`
 * (default 12 dB) wherever the dubbed speech plays and at full level between; the dubbed speech
 * is delayed by `delaySeconds` (default 0.3 s, so the original line is heard starting first, as in
 * documentary voice-over) and mixed on top. Then loudness normalisation as in the replace mix.
 * Length: `durationSeconds`, default the original's.
 */
import path from 'node:path';
import { resolveContext, subContext, ValidationError, type PartialContext } from '@dub/core';
import { renderTimeline, resample, WavReader, WavWriter } from '@dub/media';
import { normalizeLoudness } from './normalize.js';
import { dbToGain, inMixDir, resolveMixOutput, type MixOutputOptions } from './options.js';
import { DUCK_FRAME_SECONDS, duckGainsDb, gainAt, speechActivity } from './duck-envelope.js';
import type { MixResult } from './mix-result.js';

export interface MixVoiceOverOptions extends MixOutputOptions {
  /** The original audio (or the video itself: its first audio stream). */
  original: string;
  /** Dubbed speech timeline, starting at time 0 of the video (the delay is added here). */
  speech: string;
  /** Reduction of the original under the speech, dB (default 12). */
  duckDb?: number;
  /** Delay of the dubbed speech, seconds (default 0.3). */
  delaySeconds?: number;
  /** Duck ramp before speech (default 0.15 s) and back up after it (default 0.4 s). */
  attackSeconds?: number;
  releaseSeconds?: number;
  /** Gain of the original outside speech, dB (default 0). */
  originalGainDb?: number;
}

export const VOICE_OVER_DEFAULTS = Object.freeze({ duckDb: 12, delaySeconds: 0.3, attackSeconds: 0.15, releaseSeconds: 0.4 });

export async function mixVoiceOver(options: MixVoiceOverOptions, context: PartialContext = {}): Promise<MixResult> {
  const ctx = resolveContext(context);
  const o = resolveMixOutput(options);
  const duckDb = options.duckDb ?? VOICE_OVER_DEFAULTS.duckDb;
  const delay = options.delaySeconds ?? VOICE_OVER_DEFAULTS.delaySeconds;
  if (!(duckDb >= 0 && duckDb <= 60)) throw new ValidationError(`duckDb must be within 0..60, got ${duckDb}`, { field: 'duckDb' });
  if (!(delay >= 0 && delay <= 5)) throw new ValidationError(`delaySeconds must be within 0..5, got ${delay}`, { field: 'delaySeconds' });
  return inMixDir(o, async (dir, fmt) => {
    const origFile = path.join(dir, 'original.wav');
    const spFile = path.join(dir, 'speech.wav');
    const orig = await resample(options.original, origFile, fmt, subContext(ctx, 'mix_prepare', 0, 0.1));
    await resample(options.speech, spFile, fmt, subContext(ctx, 'mix_prepare', 0.1, 0.2));
    const frames = Math.round((o.durationSeconds ?? orig.duration) * o.sampleRate);
    const delayFrames = Math.round(delay * o.sampleRate);

    // the original, ducked under the (delayed) speech
    const speech = await WavReader.open(spFile);
    const ducked = path.join(dir, 'ducked.wav');
    try {
      const activity = await speechActivity(speech, -50);
      const gains = duckGainsDb(activity, o.sampleRate, {
        duckDb,
        attackSeconds: options.attackSeconds ?? VOICE_OVER_DEFAULTS.attackSeconds,
        releaseSeconds: options.releaseSeconds ?? VOICE_OVER_DEFAULTS.releaseSeconds,
        delayFrames,
        frames,
      });
      const hop = Math.max(1, Math.round(DUCK_FRAME_SECONDS * o.sampleRate));
      const base = dbToGain(options.originalGainDb ?? 0);
      const reader = await WavReader.open(origFile);
      const writer = await WavWriter.create(ducked, { sampleRate: o.sampleRate, channels: o.channels, format: 'float32' });
      try {
        for await (const w of reader.windows(65536, 0, Math.min(frames, reader.frames))) {
          const n = w.channels[0]!.length;
          const g = new Float32Array(n);
          for (let i = 0; i < n; i++) g[i] = base * gainAt(gains, hop, w.startFrame + i);
          for (const c of w.channels) for (let i = 0; i < n; i++) c[i] = c[i]! * g[i]!;
          await writer.write(w.channels);
        }
      } finally {
        await writer.close();
        await reader.close();
      }
      const duckedReader = await WavReader.open(ducked);
      try {
        await renderTimeline(
          path.join(dir, 'premix.wav'),
          { sampleRate: o.sampleRate, channels: o.channels, frames, format: 'float32' },
          [
            { atFrame: 0, audio: duckedReader },
            { atFrame: delayFrames, audio: speech, gain: dbToGain(o.speechGainDb) },
          ],
          subContext(ctx, 'mix_sum', 0.2, 0.5),
        );
      } finally {
        await duckedReader.close();
      }
    } finally {
      await speech.close();
    }
    const n = await normalizeLoudness(path.join(dir, 'premix.wav'), o.output, { target: o.loudness, sampleRate: o.sampleRate, channels: o.channels, frames, format: o.format, previousGainDb: o.previousGainDb, gainToleranceDb: o.gainToleranceDb, media: o.media }, subContext(ctx, 'mix_loudness', 0.5, 1));
    return { output: o.output, sampleRate: o.sampleRate, channels: o.channels, frames, durationSeconds: frames / o.sampleRate, inputIntegrated: n.inputIntegrated, gainDb: n.gainDb, exactGainDb: n.exactGainDb, gainKept: n.gainKept };
  });
}
