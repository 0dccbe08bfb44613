/**
 * What every engine factory receives: where models are, the shared ONNX session cache, the
 * device, and the context. Stages build it from their resolved options.
 */
import { type DeviceChoice, type Logger, type ResolveOptions, type StageContext } from '@dub/core';
import { SessionCache } from '@dub/onnx';
import { withSpeechAudio, type AudioInput, type SpeechAudio, type SpeechAudioOptions } from './speech-audio.js';

export interface EngineEnvOptions {
  /** Model lookup (DUB_MODELS_DIR, extra search dirs, manifest). */
  models?: ResolveOptions;
  /** ONNX sessions are taken from (and left in) this cache. Without one, the call creates its own and releases it at the end. */
  sessions?: SessionCache;
  device?: DeviceChoice;
  /** Intra-op threads per ONNX session (0 = onnxruntime's default). */
  threads?: number;
}

export interface EngineEnv {
  models: ResolveOptions;
  sessions: SessionCache;
  device: DeviceChoice;
  threads: number;
  logger: Logger;
}

/** Build the env; `release()` disposes the session cache only when this call created it. */
export function createEngineEnv(o: EngineEnvOptions, logger: Logger): { env: EngineEnv; release: () => Promise<void> } {
  const own = !o.sessions;
  const sessions = o.sessions ?? new SessionCache({ logger });
  return {
    env: { models: o.models ?? {}, sessions, device: o.device ?? 'cpu', threads: o.threads ?? 0, logger },
    release: async () => {
      if (own) await sessions.disposeAll();
    },
  };
}

/**
 * `fn` on `input` opened as speech audio, with an engine env made from `o.env` (sessions it made
 * itself are released after): what the public detectSpeech, transcribe and diarize do around
 * their stage.
 */
export async function runOnSpeech<T>(input: AudioInput, o: { env: EngineEnvOptions; audio: SpeechAudioOptions }, ctx: StageContext, fn: (audio: SpeechAudio, env: EngineEnv) => Promise<T>): Promise<T> {
  const { env, release } = createEngineEnv(o.env, ctx.logger);
  try {
    return await withSpeechAudio(input, o.audio, ctx, (audio) => fn(audio, env));
  } finally {
    await release();
  }
}
