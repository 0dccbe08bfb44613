import { describe, expect, it } from 'vitest';
import { FsBlobStore, loadConfig, silentLogger } from '@dub/core';
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
    expect(providers.map(([file]) => path.basename(file)).sort()).toEqual(['htdemucs.onnx', 'silero_vad_v5.onnx']);
    expect(providers.every(([, p]) => p === 'cpu')).toBe(true);
    await sessions.disposeAll();
  });
  it('does nothing when config.warmup is off', async () => {
    const sessions = new SessionCache();
    await warmup({ store, config: { ...loadConfig({}), warmup: false }, sessions, logger: silentLogger });
    expect(sessions.size).toBe(0);
  });
});
