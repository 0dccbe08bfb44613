/**
 * The tiny Piper stand-in (fixtures/tiny-piper.onnx) against the signature of Piper's voice export
 * (fixtures/piper-signature.json, read from piper_train/export_onnx.py and piper's voice.py), and
 * the engine running on it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveContext } from '@dub/core';
import { SessionCache } from '@dub/onnx';
import { expectSignature, type Signature } from '../../../test/support/signature.js';
import { createPiperEngine } from './engines/piper-engine.js';
import { DEFAULT_VOICE } from './types.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));
const sig = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'piper-signature.json'), 'utf8')) as Signature;
const sessions = new SessionCache();
afterAll(() => sessions.disposeAll());

describe('Piper voice (stand-in: tiny-piper.onnx)', () => {
  it('has exactly the export signature (single-speaker: no sid; output [1,1,1,T])', async () => {
    expect(String(sig.source)).toMatch(/piper_train\/export_onnx\.py/);
    expectSignature((await sessions.get(path.join(FIXTURES, 'tiny-piper.onnx'))).session, sig.files['voice.onnx']!, 'piper');
  });

  it('the engine synthesizes with it', async () => {
    const engine = createPiperEngine({ voices: { 'es-ES': path.join(FIXTURES, 'tiny-piper.onnx') }, sessions });
    const a = await engine.synthesize({ text: 'Hola, son las 10:30.', locale: 'es-ES', speed: 1, voice: DEFAULT_VOICE }, resolveContext());
    expect(a.sampleRate).toBe(22050);
    expect(a.channels[0]!.length).toBeGreaterThan(22050 / 4);
    await engine.dispose();
  });
});
