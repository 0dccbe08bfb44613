/**
 * The lips models against the signatures of their public exports (fixtures/<engine>-signature.json,
 * with their sources): the tiny Wav2Lip stand-in and the shipped BlazeFace detectors must have
 * exactly those inputs and outputs, and the engines must run on them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveContext, resolveModelFile } from '@dub/core';
import { SessionCache } from '@dub/onnx';
import { expectSignature, type Signature } from '../../../test/support/signature.js';
import { Wav2LipEngine, WAV2LIP_SIZE } from './engines/wav2lip.js';
import { BLAZEFACE_FILES, BLAZEFACE_MODEL_ID, BlazeFaceDetector } from './face/blazeface.js';
import { createImage } from './image/rgb-image.js';
import { TINY_WAV2LIP } from './media.test-helper.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));
const signature = (name: string): Signature => JSON.parse(fs.readFileSync(path.join(FIXTURES, `${name}-signature.json`), 'utf8')) as Signature;
const sessions = new SessionCache();
afterAll(() => sessions.disposeAll());

describe('Wav2Lip (stand-in: tiny-wav2lip.onnx)', () => {
  it('has exactly the export signature and the engine infers a 96x96 face with it', async () => {
    const sig = signature('wav2lip');
    expect(String(sig.source)).toMatch(/facefusion\/facefusion\/blob\/.*lip_syncer\.py/);
    expectSignature((await sessions.get(TINY_WAV2LIP)).session, sig.files['wav2lip_gan_96.onnx']!, 'wav2lip');
    const engine = await Wav2LipEngine.load({ modelPath: TINY_WAV2LIP, sessions });
    const crop = createImage(WAV2LIP_SIZE, WAV2LIP_SIZE);
    crop.data.fill(100);
    const out = await engine.infer(crop, new Float32Array(80 * 16), resolveContext());
    expect(out.length).toBe(3 * WAV2LIP_SIZE * WAV2LIP_SIZE);
  });
});

describe('BlazeFace (the shipped detectors)', () => {
  it('both ranges have exactly the signature of the Barracuda ONNX files and the detector runs on them', async () => {
    const sig = signature('blazeface');
    for (const range of ['full', 'short'] as const) {
      const file = resolveModelFile(BLAZEFACE_MODEL_ID, BLAZEFACE_FILES[range]);
      expectSignature((await sessions.get(file)).session, sig.files[BLAZEFACE_FILES[range]]!, `blazeface ${range}`);
      const detector = await BlazeFaceDetector.load({ range, sessions });
      expect(await detector.detect(createImage(320, 240))).toEqual([]);
    }
  });
});
