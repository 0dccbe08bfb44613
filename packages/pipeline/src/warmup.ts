/**
 * Worker-thread warmup (called by @dub/worker once per thread when config.warmup is set): run
 * the ONNX stages every prepare runs (separation, voice activity) on one second of quiet noise,
 * through the same code path and session options that jobs use, so their sessions are in the
 * thread's cache and the worker logs the execution provider each model got before the first job.
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
import { engineChoiceFromEnv, engineHost, resolveEngine } from './engine-choice.js';
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
  const engines = { separation: sep.id, vad: vad.id };
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
    rt.logger.info({ engines, providers: Object.fromEntries(rt.sessions.providers), seconds: Number(((performance.now() - t0) / 1000).toFixed(2)) }, 'warmup: models loaded');
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
  }
}
