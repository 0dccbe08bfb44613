import { describe, expect, it } from 'vitest';
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
  it('does nothing when config.warmup is off', async () => {
    const sessions = new SessionCache();
    await warmup({ store, config: { ...loadConfig({}), warmup: false }, sessions, logger: silentLogger });
    expect(sessions.size).toBe(0);
  });
});
