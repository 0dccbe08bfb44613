import { afterEach, describe, expect, it, vi } from 'vitest';
import { FsBlobStore, loadConfig, resolveModelFile, silentLogger } from '@dub/core';
import { resolveHtdemucsGraph } from '@dub/separation';
import { SessionCache } from '@dub/onnx';
import os from 'node:os';
import path from 'node:path';
import { warmup } from './warmup.js';

describe('warmup', () => {
  const store = new FsBlobStore(path.join(os.tmpdir(), 'dub-warmup-test-blobs'));
  it('loads the default models into the thread session cache when config.warmup is set', async () => {
    const sessions = new SessionCache();
    await warmup({ store, config: { ...loadConfig({}), warmup: true }, sessions, logger: silentLogger });
    const providers = Object.entries(Object.fromEntries(sessions.providers));
    // HTDemucs whole, or its consecutive parts where scripts/fetch-npm-models.sh made them
    const form = await resolveHtdemucsGraph(resolveModelFile('htdemucs', 'htdemucs.onnx'), { device: 'cpu' });
    const htdemucs = form.split ? form.split.parts.map((p) => path.basename(p.file)) : ['htdemucs.onnx'];
    expect(providers.map(([file]) => path.basename(file)).sort()).toEqual([...htdemucs, 'silero_vad_v5.onnx'].sort());
    expect(providers.every(([, p]) => p === 'cpu')).toBe(true);
    await sessions.disposeAll();
  });
  afterEach(() => {
    vi.unstubAllEnvs();
  });
  const htdemucsFiles = async () => {
    const form = await resolveHtdemucsGraph(resolveModelFile('htdemucs', 'htdemucs.onnx'), { device: 'cpu' });
    return form.split ? form.split.parts.map((p) => path.basename(p.file)) : ['htdemucs.onnx'];
  };
  it('loads no Silero model when DUB_VAD_ENGINE=energy: only the separation model the stages will use', async () => {
    vi.stubEnv('DUB_VAD_ENGINE', 'energy');
    vi.stubEnv('DUB_SEPARATION_ENGINE', '');
    const sessions = new SessionCache();
    await warmup({ store, config: { ...loadConfig({}), warmup: true }, sessions, logger: silentLogger });
    const files = [...sessions.providers.keys()].map((f) => path.basename(f)).sort();
    expect(files).not.toContain('silero_vad_v5.onnx');
    expect(files).toEqual((await htdemucsFiles()).sort());
    await sessions.disposeAll();
  });
  it('loads only Silero when DUB_SEPARATION_ENGINE=none', async () => {
    vi.stubEnv('DUB_SEPARATION_ENGINE', 'none');
    vi.stubEnv('DUB_VAD_ENGINE', 'silero');
    const sessions = new SessionCache();
    await warmup({ store, config: { ...loadConfig({}), warmup: true }, sessions, logger: silentLogger });
    expect([...sessions.providers.keys()].map((f) => path.basename(f))).toEqual(['silero_vad_v5.onnx']);
    await sessions.disposeAll();
  });
  it('loads nothing when neither configured engine has a model (energy VAD, separation none)', async () => {
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
