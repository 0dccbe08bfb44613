/**
 * Each ONNX model this package runs, against the signature of its public export
 * (fixtures/<engine>-signature.json, with the source it was read from): the tiny stand-ins (Whisper,
 * WeSpeaker) and the shipped Silero VAD must have exactly those inputs and outputs, and the engine
 * must run on them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveContext, resolveModelFile } from '@dub/core';
import { SessionCache } from '@dub/onnx';
import { expectSignature, type Signature } from '../../../test/support/signature.js';
import { createEngineEnv } from './engine-env.js';
import { createOnnxEmbedding, resolveOnnxEmbeddingOptions } from './speakers/onnx-embedding.js';
import { createSileroVad, SILERO_MODEL_FILE, SILERO_MODEL_ID } from './vad/silero.js';
import { decodeWithFallback, suppressTokenIds } from './whisper/decode.js';
import { loadWhisper } from './whisper/engine.js';
import { resolveWhisperOptions } from './whisper/options.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));
const signature = (name: string): Signature => JSON.parse(fs.readFileSync(path.join(FIXTURES, `${name}-signature.json`), 'utf8')) as Signature;
const sessions = new SessionCache();
afterAll(() => sessions.disposeAll());
const { env } = createEngineEnv({ sessions, models: { searchDirs: [FIXTURES] } }, resolveContext().logger);

describe('Whisper (stand-in: whisper-tiny-test)', () => {
  const sig = signature('whisper');
  it('names its sources', () => {
    expect(sig.source).toEqual(expect.arrayContaining([expect.stringMatching(/^https:\/\/github\.com\/huggingface\/optimum\//)]));
  });
  it('encoder and merged decoder have exactly the export signature (any number of layers)', async () => {
    expectSignature((await sessions.get(path.join(FIXTURES, 'whisper-tiny-test', 'encoder_model.onnx'))).session, sig.files['encoder_model.onnx']!, 'encoder');
    expectSignature((await sessions.get(path.join(FIXTURES, 'whisper-tiny-anymels-test', 'encoder_model.onnx'))).session, sig.files['encoder_model.onnx']!, 'encoder (symbolic mel bins)');
    expectSignature((await sessions.get(path.join(FIXTURES, 'whisper-tiny-test', 'decoder_model_merged.onnx'))).session, sig.files['decoder_model_merged.onnx']!, 'decoder');
  });
  it('the engine runs on it: features, encoder, decoding with the safeguards', async () => {
    const w = await loadWhisper(resolveWhisperOptions({ model: 'whisper-tiny-test' }), env);
    const enc = await w.sessions.encode(w.features.extract(new Float32Array(16000)));
    const r = await decodeWithFallback(w.sessions, w.tokenizer, enc, { language: 'de', timestamps: true, maxNewTokens: 20, suppress: suppressTokenIds(w.tokenizer) });
    expect(r.text).toContain('hello world');
  });
});

describe('WeSpeaker (stand-in: speaker-embedding-tiny-test)', () => {
  it('has exactly the export signature and the engine embeds with it', async () => {
    const sig = signature('wespeaker');
    expect(String(sig.source)).toMatch(/wespeaker\/bin\/export_onnx\.py/);
    const file = path.join(FIXTURES, 'speaker-embedding-tiny-test', 'embedding.onnx');
    expectSignature((await sessions.get(file)).session, sig.files['voxceleb_resnet34_LM.onnx']!, 'wespeaker');
    const engine = await createOnnxEmbedding(resolveOnnxEmbeddingOptions({ file }), env);
    const x = Float32Array.from({ length: 16000 }, (_, i) => Math.sin(i / 7) * 0.3);
    const e = await engine.embed(x);
    expect(e.length).toBe(16);
    expect(e.every(Number.isFinite)).toBe(true);
  });
});

describe('the signature check', () => {
  it('fails on a model whose inputs or outputs differ', async () => {
    const wespeaker = (await sessions.get(path.join(FIXTURES, 'speaker-embedding-tiny-test', 'embedding.onnx'))).session;
    expect(() => expectSignature(wespeaker, signature('whisper').files['encoder_model.onnx']!, 'wrong model')).toThrow();
    const spec = signature('wespeaker').files['voxceleb_resnet34_LM.onnx']!;
    expect(() => expectSignature(wespeaker, { ...spec, outputs: [{ ...spec.outputs[0]!, rank: 3 }] }, 'wrong rank')).toThrow();
  });
});

describe('Silero VAD v5 (the shipped model)', () => {
  it('has exactly the signature of silero-vad and the engine scores frames with it', async () => {
    const sig = signature('silero-vad');
    const file = resolveModelFile(SILERO_MODEL_ID, SILERO_MODEL_FILE);
    expectSignature((await sessions.get(file)).session, sig.files['silero_vad_v5.onnx']!, 'silero');
    const vad = await createSileroVad(env);
    const p = await vad.createStream().process(new Float32Array(512 * 4));
    expect(p.length).toBe(4);
    for (const v of p) expect(v >= 0 && v <= 1).toBe(true);
  });
});
