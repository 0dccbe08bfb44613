/**
 * Worker-thread warmup (called by @dub/worker once per thread when config.warmup is set): run
 * the default ONNX stages (HTDemucs separation, Silero VAD) on one second of quiet noise, through
 * the same code path and session options that jobs use, so their sessions are in the thread's
 * cache and the worker logs the execution provider each model got before the first job. A model
 * that cannot load fails here, at start, rather than in the middle of a job.
 */
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { BlobStore, DubConfig, Logger } from '@dub/core';
import type { SessionCache } from '@dub/onnx';
import { resolveContext } from '@dub/core';
import { writeWav } from '@dub/media';
import { defaultStages } from './stages.js';

export interface WarmupRuntime {
  store: BlobStore;
  config: DubConfig;
  sessions: SessionCache;
  logger: Logger;
}

export async function warmup(rt: WarmupRuntime): Promise<void> {
  if (!rt.config.warmup) return;
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
    await defaultStages.separate(mix, out, undefined, env, ctx);
    await defaultStages.detectSpeech(out.speech, env, ctx);
    rt.logger.info({ providers: Object.fromEntries(rt.sessions.providers), seconds: Number(((performance.now() - t0) / 1000).toFixed(2)) }, 'warmup: default models loaded');
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
  }
}
