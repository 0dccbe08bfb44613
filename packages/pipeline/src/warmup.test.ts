import { afterEach, describe, expect, it, vi } from 'vitest';
import { FsBlobStore, loadConfig, resolveModelFile, silentLogger } from '@dub/core';
import { resolveHtdemucsGraph, SEPARATION_ENGINES } from '@dub/separation';
import { SessionCache } from '@dub/onnx';
import os from 'node:os';
import path from 'node:path';
import { warmup } from './warmup.js';
import { asrEngineIdentity, resolveEngine } from './engine-choice.js';

/** The files of the HTDemucs model `auto` takes on the CPU (htdemucs-int8 where set-up made it, else htdemucs): its split parts, or the whole graph. */
async function htdemucsFiles(): Promise<string[]> {
  const auto = await SEPARATION_ENGINES.resolve('auto', undefined, { models: {}, device: 'cpu' });
  const model = auto.id === 'htdemucs-int8' ? { id: 'htdemucs-int8', file: 'htdemucs-int8.onnx' } : { id: 'htdemucs', file: 'htdemucs.onnx' };
  const whole = resolveModelFile(model.id, model.file);
  const form = await resolveHtdemucsGraph(whole, { modelId: model.id, device: 'cpu' });
  return form.split ? form.split.parts.map((p) => p.file) : [whole];
}

describe('warmup', () => {
  const store = new FsBlobStore(path.join(os.tmpdir(), 'dub-warmup-test-blobs'));
  /** The speech models auto warms as well, where installed: Whisper (encoder and decoder) and Kokoro. */
  async function speechModelFiles(): Promise<string[]> {
    const asr = await asrEngineIdentity('en-US', undefined);
    const tts = await resolveEngine('tts', 'auto', 'en-US', { models: {}, device: 'cpu' });
    return [...(asr.engine === 'whisper' ? asr.models.map((m) => m.file).filter((f) => f.endsWith('.onnx')) : []), ...(tts.id === 'kokoro' ? tts.models.map((m) => m.file) : [])];
  }
  it('loads the default models into the thread session cache when config.warmup is set', async () => {
    const sessions = new SessionCache();
    await warmup({ store, config: { ...loadConfig({}), warmup: true }, sessions, logger: silentLogger });
    const providers = Object.entries(Object.fromEntries(sessions.providers));
    // The HTDemucs model auto takes (int8 on the CPU where scripts/fetch-npm-models.sh made it), whole or as its consecutive parts
    const htdemucs = await htdemucsFiles();
    const speech = await speechModelFiles();
    expect(providers.map(([file]) => file).filter((f) => path.basename(f) !== 'silero_vad_v5.onnx' && !speech.includes(f)).sort()).toEqual(htdemucs.sort());
    expect(providers.map(([file]) => path.basename(file))).toContain('silero_vad_v5.onnx');
    // Whisper and Kokoro where npm ci and set-up installed them (the models every job runs)
    for (const f of speech) expect(providers.map(([file]) => file)).toContain(f);
    expect(providers.length).toBe(htdemucs.length + 1 + speech.length);
    expect(providers.every(([, p]) => p === 'cpu')).toBe(true);
    await sessions.disposeAll();
  });
  afterEach(() => {
    vi.unstubAllEnvs();
  });
  /** The tests below count the prepare models alone: no speech recognition or voice model to warm. */
  const withoutSpeechModels = () => {
    vi.stubEnv('DUB_ASR_ENGINE', 'pocketsphinx');
    vi.stubEnv('DUB_TTS_ENGINE', 'espeak-ng');
  };
  it('loads no Silero model when DUB_VAD_ENGINE=energy: only the separation model the stages will use', async () => {
    withoutSpeechModels();
    vi.stubEnv('DUB_VAD_ENGINE', 'energy');
    vi.stubEnv('DUB_SEPARATION_ENGINE', '');
    const sessions = new SessionCache();
    await warmup({ store, config: { ...loadConfig({}), warmup: true }, sessions, logger: silentLogger });
    const files = [...sessions.providers.keys()].sort();
    expect(files.map((f) => path.basename(f))).not.toContain('silero_vad_v5.onnx');
    expect(files).toEqual((await htdemucsFiles()).sort());
    await sessions.disposeAll();
  });
  it('loads only Silero when DUB_SEPARATION_ENGINE=none', async () => {
    withoutSpeechModels();
    vi.stubEnv('DUB_SEPARATION_ENGINE', 'none');
    vi.stubEnv('DUB_VAD_ENGINE', 'silero');
    const sessions = new SessionCache();
    await warmup({ store, config: { ...loadConfig({}), warmup: true }, sessions, logger: silentLogger });
    expect([...sessions.providers.keys()].map((f) => path.basename(f))).toEqual(['silero_vad_v5.onnx']);
    await sessions.disposeAll();
  });
  it('loads nothing when neither configured engine has a model (energy VAD, separation none)', async () => {
    withoutSpeechModels();
    vi.stubEnv('DUB_SEPARATION_ENGINE', 'none');
    vi.stubEnv('DUB_VAD_ENGINE', 'energy');
    const sessions = new SessionCache();
    await warmup({ store, config: { ...loadConfig({}), warmup: true }, sessions, logger: silentLogger });
    expect(sessions.size).toBe(0);
  });
  it('fails at start when an explicit engine cannot run (unknown engine id)', async () => {
    vi.stubEnv('DUB_VAD_ENGINE', 'webrtc');
    const sessions = new SessionCache();
    await expect(warmup({ store, config: { ...loadConfig({}), warmup: true }, sessions, logger: silentLogger })).rejects.toMatchObject({ code: 'validation_error', field: 'DUB_VAD_ENGINE' });
    expect(sessions.size).toBe(0);
  });
  it('does nothing when config.warmup is off', async () => {
    const sessions = new SessionCache();
    await warmup({ store, config: { ...loadConfig({}), warmup: false }, sessions, logger: silentLogger });
    expect(sessions.size).toBe(0);
  });
});
