import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '@dub/core';
import { resolveEngineOptions, resolveSeparateOptions } from './options.js';
import { loadSeparationEngine, SEPARATION_ENGINES } from './registry.js';
import { SEPARATION_ENGINE_IDS } from './engine-ids.js';
import { separate } from './separate.js';
import { resolveContext } from '@dub/core';

const config = loadConfig({ DUB_MODELS_DIR: '/models', DUB_DEVICE: 'cuda:1', DUB_ONNX_THREADS: '3', DUB_TMP_DIR: '/scratch' });

describe('separation options', () => {
  it('resolves partial options into complete ones: explicit, then config, then defaults', () => {
    const o = resolveSeparateOptions({ config });
    expect(o.engine).toBe('htdemucs');
    expect(o.format).toBe('float32');
    expect(o.given).toBeUndefined();
    expect(o.engineOptions).toMatchObject({ device: 'cuda:1', threads: 3, modelsDir: '/models', overlap: 0.1, memPattern: true, tmpDir: '/scratch' });
    const e = resolveEngineOptions({ config: loadConfig({}), device: 'cpu', threads: 0, overlap: 0.5 });
    expect(e.threads).toBe(os.availableParallelism());
    expect(e.overlap).toBe(0.5);
    expect(e.device).toBe('cpu');
  });

  it('refuses bad values with validation errors naming the field', () => {
    expect(() => resolveEngineOptions({ config, overlap: 1 })).toThrow(expect.objectContaining({ code: 'validation_error', field: 'overlap' }));
    expect(() => resolveEngineOptions({ config, threads: -1 })).toThrow(expect.objectContaining({ field: 'threads' }));
    expect(() => resolveSeparateOptions({ config, engine: 'nope' as never })).toThrow(expect.objectContaining({ field: 'engine' }));
  });

  it('an empty given object means no given tracks', () => {
    expect(resolveSeparateOptions({ config, given: {} }).given).toBeUndefined();
  });

  it('lists its engines; each loads lazily into a module with createEngine', async () => {
    expect(SEPARATION_ENGINE_IDS).toEqual(['htdemucs', 'htdemucs-int8', 'spleeter-2stems', 'none']);
    expect(SEPARATION_ENGINES.ids).toEqual(SEPARATION_ENGINE_IDS);
    const mod = await import('./engines/htdemucs.js');
    expect(typeof mod.createEngine).toBe('function');
  });

  it('the engine none loads no model: the mix is the speech track, the background silence', async () => {
    const mix = [0, 1].map((c) => Float32Array.from({ length: 44100 }, (_, i) => Math.sin((2 * Math.PI * (220 + 110 * c) * i) / 44100) * 0.3));
    const r = await separate({ sampleRate: 44100, channels: mix }, { config, engine: 'none' });
    expect(r.speech.channels.map((c) => Array.from(c))).toEqual(mix.map((c) => Array.from(c)));
    expect(r.background.channels.every((c) => c.length === 44100 && c.every((v) => v === 0))).toBe(true);
    await expect(loadSeparationEngine('none', resolveEngineOptions({ config }), resolveContext())).rejects.toMatchObject({ code: 'validation_error' });
  });
});
