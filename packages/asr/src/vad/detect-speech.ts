/**
 * detectSpeech: stream the audio through a VAD engine in windows (memory bounded by the window and
 * one probability per frame) and turn the probabilities into speech regions. The engine comes
 * from VAD_ENGINES (`auto`: Silero when its model resolves, else the energy VAD; an explicit one
 * that cannot run throws the registry's error naming `npx dub models fetch`).
 */
import { engineChoiceOf, resolveContext, reportProgress, throwIfAborted, type PartialContext, type StageContext } from '@dub/core';
import { runOnSpeech, type EngineEnv, type EngineEnvOptions } from '../engine-env.js';
import { SPEECH_SAMPLE_RATE, type AudioInput, type SpeechAudio, type SpeechAudioOptions } from '../speech-audio.js';
import { speechRegions, type RegionOptions } from './regions.js';
import { VAD_ENGINE_IDS, VAD_ENGINES, type VadEngineId } from './registry.js';
import type { SpeechDetection, VadEngine } from './types.js';

export interface VadOptions extends EngineEnvOptions, SpeechAudioOptions, Partial<RegionOptions> {
  /** `auto` (default: Silero when installed, else energy) or an engine id (DUB_VAD_ENGINE's values). */
  engine?: VadEngineId | 'auto';
  /** Seconds of audio read per window (default 30). */
  windowSeconds?: number;
}

export interface ResolvedVadOptions extends RegionOptions {
  engine: VadEngineId | 'auto';
  windowSeconds: number;
  env: EngineEnvOptions;
  audio: SpeechAudioOptions;
}

export function resolveVadOptions(o: VadOptions = {}): ResolvedVadOptions {
  const threshold = o.threshold ?? 0.5;
  const r: ResolvedVadOptions = {
    engine: engineChoiceOf('engine', o.engine, VAD_ENGINE_IDS),
    windowSeconds: o.windowSeconds ?? 30,
    threshold,
    negThreshold: o.negThreshold ?? Math.max(0.01, threshold - 0.15),
    minSpeech: o.minSpeech ?? 0.25,
    minSilence: o.minSilence ?? 0.3,
    padding: o.padding ?? 0.1,
    env: { ...(o.models ? { models: o.models } : {}), ...(o.sessions ? { sessions: o.sessions } : {}), ...(o.device ? { device: o.device } : {}), ...(o.threads !== undefined ? { threads: o.threads } : {}) },
    audio: { ...(o.tmpDir ? { tmpDir: o.tmpDir } : {}), ...(o.ffmpegPath ? { ffmpegPath: o.ffmpegPath } : {}), ...(o.ffprobePath ? { ffprobePath: o.ffprobePath } : {}) },
  };
  if (!(r.threshold > 0 && r.threshold < 1) || !(r.negThreshold > 0 && r.negThreshold <= r.threshold)) throw new RangeError(`VAD thresholds must satisfy 0 < negThreshold <= threshold < 1`);
  if (!(r.windowSeconds > 0)) throw new RangeError('windowSeconds must be > 0');
  return r;
}

/** Probabilities of every frame of `audio` from `engine`. */
export async function vadProbabilities(engine: VadEngine, audio: SpeechAudio, windowSeconds: number, ctx: StageContext): Promise<Float32Array> {
  const frame = engine.frameSamples;
  const nFrames = Math.ceil(audio.frames / frame);
  const out = new Float32Array(nFrames);
  const window = Math.max(1, Math.floor((windowSeconds * SPEECH_SAMPLE_RATE) / frame)) * frame;
  const stream = engine.createStream();
  let done = 0;
  for await (const { samples } of audio.windows(window)) {
    throwIfAborted(ctx.signal);
    const padded = samples.length % frame === 0 ? samples : padTo(samples, Math.ceil(samples.length / frame) * frame);
    const p = await stream.process(padded);
    out.set(p, done);
    done += p.length;
    reportProgress(ctx, 'vad', done / nFrames);
  }
  return out;
}

function padTo(x: Float32Array, n: number): Float32Array {
  const y = new Float32Array(n);
  y.set(x);
  return y;
}

export async function runVad(audio: SpeechAudio, o: ResolvedVadOptions, env: EngineEnv, ctx: StageContext): Promise<SpeechDetection> {
  const chosen = await VAD_ENGINES.resolve(o.engine, undefined, env);
  const engine = await chosen.entry.create({}, env);
  const started = Date.now();
  const probabilities = await vadProbabilities(engine, audio, o.windowSeconds, ctx);
  const frameSeconds = engine.frameSamples / SPEECH_SAMPLE_RATE;
  const regions = speechRegions(probabilities, frameSeconds, audio.duration, o);
  ctx.logger.debug({ engine: engine.id, reason: chosen.reason, regions: regions.length, ms: Date.now() - started }, 'vad done');
  return { engine: engine.id, duration: audio.duration, frameSeconds, probabilities, regions };
}

/** Find the speech in `input` (a media path, samples, or an open SpeechAudio). */
export async function detectSpeech(input: AudioInput, options: VadOptions = {}, context: PartialContext = {}): Promise<SpeechDetection> {
  const ctx = resolveContext(context);
  const o = resolveVadOptions(options);
  return runOnSpeech(input, o, ctx, (audio, env) => runVad(audio, o, env, ctx));
}
