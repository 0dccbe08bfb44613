/**
 * Whisper base q8's encoder (Xenova's export, from npm: every machine that ran `npm ci` has it) as
 * loadWhisper loads it: with last_hidden_state as its only graph output, so that onnxruntime frees
 * the six attention maps the export also outputs inside each run. The hidden state of a real 30 s
 * window is the one the model as shipped computes, bit for bit.
 */
import { afterAll, expect, it } from 'vitest';
import { silentLogger } from '@dub/core';
import { ort, SessionCache, tensorF32 } from '@dub/onnx';
import { createEngineEnv } from './engine-env.js';
import { openSpeechAudio } from './speech-audio.js';
import { loadWhisper, resolveWhisperFiles } from './whisper/engine.js';
import { resolveWhisperOptions } from './whisper/options.js';
import { describeWithMedia, media } from '../../../test/support/media.js';

const sessions = new SessionCache();
afterAll(() => sessions.disposeAll());

describeWithMedia(['jfk.wav'], 'Whisper encoder with its hidden state as only output', () => {
  it('drops the attention maps and computes the same hidden state as the model as shipped', async () => {
    const o = resolveWhisperOptions();
    const { env } = createEngineEnv({ sessions, models: {} }, silentLogger);
    const w = await loadWhisper(o, env);
    expect(w.sessions.encoder.outputNames).toEqual(['last_hidden_state']);
    const shipped = await ort().InferenceSession.create(resolveWhisperFiles(o, env).encoder, { enableCpuMemArena: false, logSeverityLevel: 3 });
    try {
      expect(shipped.outputNames.filter((n) => n.startsWith('encoder_attentions.')).length).toBe(6);
      const audio = await openSpeechAudio(media('jfk.wav'));
      const features = w.features.extract(await audio.read(0, audio.frames));
      const mine = await w.sessions.encode(features);
      const theirs = (await shipped.run({ input_features: tensorF32(features, [1, w.sessions.nMels, features.length / w.sessions.nMels]) }, ['last_hidden_state'])).last_hidden_state!;
      expect(mine.dims).toEqual([1, 1500, 512]);
      expect(Buffer.from((mine.data as Float32Array).buffer).equals(Buffer.from((theirs.data as Float32Array).buffer))).toBe(true);
    } finally {
      await shipped.release();
    }
  });
});

