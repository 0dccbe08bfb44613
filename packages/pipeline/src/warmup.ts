/**
 * Worker-thread warmup (called by @dub/worker once per thread when config.warmup is set): run
 * the ONNX stages every prepare runs (separation, voice activity) on one second of quiet noise,
 * and the speech recognition (Whisper: the source's transcription and the back-transcription of
 * every dub) and the neural voice (Kokoro or Piper, one short line) where auto or the
 * configuration picks them, through the same code path and session options that jobs use, so
 * their sessions are in the thread's cache, each model has run once (ONNX Runtime's first run
 * of a session costs more than the next), and the worker logs the execution provider each model
 * got before the first job.
 * The engines are the ones the stages will use: resolved from the same choice
 * (`DUB_SEPARATION_ENGINE`, `DUB_VAD_ENGINE`, see engine-choice.ts) and registries, so an engine
 * without a model (energy VAD, separation `none`) loads nothing, and a model no job will use is
 * not loaded. An explicit engine whose model cannot load fails here, at start, rather than in the
 * middle of a job.
 */
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { BlobStore, DubConfig, Logger } from '@dub/core';
import type { SessionCache } from '@dub/onnx';
import { resolveContext } from '@dub/core';
import { writeWav } from '@dub/media';
import type { StageContext } from '@dub/core';
import { sessionCacheOf } from '@dub/onnx';
import { asrEngineIdentity, engineChoiceFromEnv, engineHost, resolveEngine, type EngineChoice } from './engine-choice.js';
import { defaultStages } from './stages.js';

export interface WarmupRuntime {
  store: BlobStore;
  config: DubConfig;
  sessions: SessionCache;
  logger: Logger;
}

export async function warmup(rt: WarmupRuntime): Promise<void> {
  if (!rt.config.warmup) return;
  const choice = engineChoiceFromEnv(process.env);
  const sep = await resolveEngine('separation', choice.separation, undefined, { ...engineHost(rt.config.modelsDir), device: rt.config.device });
  const vad = await resolveEngine('vad', choice.vad, undefined, engineHost(rt.config.modelsDir) as never);
  const engines: Record<string, string> = { separation: sep.id, vad: vad.id };
  if (sep.models.length === 0 && vad.models.length === 0) {
    rt.logger.info({ engines }, 'warmup: the configured engines load no model');
    return;
  }
  const dir = await fsp.mkdtemp(path.join(rt.config.tmpDir || os.tmpdir(), 'dub-warmup-'));
  try {
    const rate = 44_100;
    const noise = () => Float32Array.from({ length: rate }, (_, i) => 0.001 * Math.sin(i * 0.7) * ((i * 7919) % 13) / 13);
    const mix = path.join(dir, 'mix.wav');
    await writeWav(mix, { sampleRate: rate, channels: [noise(), noise()] }, { format: 'float32' });
    const env = { config: rt.config, sessions: rt.sessions, tmpDir: dir };
    const ctx = resolveContext({ logger: rt.logger });
    const t0 = performance.now();
    const out = { speech: path.join(dir, 'speech.wav'), background: path.join(dir, 'background.wav') };
    // The engine the jobs will run (auto: htdemucs-int8 on the CPU where set-up made it), not the stage's default.
    if (sep.models.length > 0) await defaultStages.separate(mix, out, undefined, env, ctx, undefined, sep.id);
    if (vad.models.length > 0) await defaultStages.detectSpeech(sep.models.length > 0 ? out.speech : mix, env, ctx, vad.id);
    Object.assign(engines, await warmSpeechModels(rt, mix, dir, choice, ctx));
    rt.logger.info({ engines, providers: Object.fromEntries(rt.sessions.providers), seconds: Number(((performance.now() - t0) / 1000).toFixed(2)) }, 'warmup: models loaded');
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
  }
}

/** The locale the speech models are warmed with: the models are the same for every locale they speak. */
const WARM_LOCALE = 'en-US';

/**
 * Whisper (when it is the ASR auto or the configuration picks) transcribes `mix` as the
 * transcription stage does (the encoder and a bounded decoding); Kokoro or Piper (the same) says
 * one short line. Each only
 * where its model resolves; a failure is logged and left to the first job that needs the model.
 */
async function warmSpeechModels(rt: WarmupRuntime, mix: string, dir: string, choice: EngineChoice, ctx: StageContext): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const host = engineHost(rt.config.modelsDir);
  try {
    const asr = await asrEngineIdentity(WARM_LOCALE, rt.config.modelsDir, choice.asr);
    if (asr.engine === 'whisper') {
      // the transcription stage as a job runs it (its sessions, options and decoding), on the second of noise as one region
      const env = { config: rt.config, sessions: rt.sessions, tmpDir: dir };
      await defaultStages.transcribe(mix, { locale: WARM_LOCALE, engine: 'whisper', regions: { engine: 'warmup', duration: 1, frameSeconds: 0.032, regions: [{ start: 0, end: 1, probability: 1 }] } }, env, ctx);
      out.asr = asr.engine;
    }
  } catch (e) {
    rt.logger.warn({ err: (e as Error).message }, 'warmup: the speech recognition model did not load; the first job loads it');
  }
  try {
    const tts = await resolveEngine('tts', choice.tts, WARM_LOCALE, { ...host, device: rt.config.device });
    if (tts.id === 'kokoro' || tts.id === 'piper') {
      const { TTS_ENGINES, DEFAULT_VOICE } = await import('@dub/voice');
      // as generate-synthesis creates them: the thread's sessions, models dir and device
      const config = { sessions: sessionCacheOf(rt.sessions), ...(rt.config.modelsDir ? { modelsDir: rt.config.modelsDir } : {}), device: rt.config.device };
      const engine = await TTS_ENGINES.create(tts.id, { [tts.id]: config } as never, host);
      // not disposed when Piper: its dispose releases its voice's session from the thread's cache (Kokoro's keeps it there)
      try {
        await engine.synthesize({ text: 'Hello.', locale: WARM_LOCALE, voice: DEFAULT_VOICE, speed: 1 }, ctx);
      } finally {
        if (tts.id === 'kokoro') await engine.dispose();
      }
      out.tts = tts.id;
    }
  } catch (e) {
    rt.logger.warn({ err: (e as Error).message }, 'warmup: the voice model did not load; the first job loads it');
  }
  return out;
}
