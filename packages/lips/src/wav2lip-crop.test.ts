import { describe, expect, it } from 'vitest';
import { wav2lipCrop, WAV2LIP_PADS, Wav2LipEngine } from './engines/wav2lip.js';
import type { FaceFrame } from './face/mouth-region.js';

const face = (x: number, y: number, w: number, h: number): FaceFrame => ({ face: { x, y, w, h }, mouth: { x: x + w / 4, y: y + (h * 2) / 3, w: w / 2, h: h / 4 }, mouthCenter: { x: x + w / 2, y: y + (h * 5) / 6 }, eyeDistance: w / 3 });

describe("Wav2Lip face crop (inference.py's --pads)", () => {
  it('pads the box 10 frame pixels at the bottom, nothing elsewhere (Wav2Lip default pads 0 10 0 0)', () => {
    expect(WAV2LIP_PADS).toEqual([0, 10, 0, 0]);
    expect(wav2lipCrop(face(100, 80, 200, 250), 640, 480)).toEqual({ x: 100, y: 80, w: 200, h: 260 });
  });

  it('clamps the padded box to the frame, as inference.py does', () => {
    expect(wav2lipCrop(face(500, 300, 200, 175), 640, 480)).toEqual({ x: 500, y: 300, w: 140, h: 180 });
    expect(wav2lipCrop(face(-20, -10, 100, 100), 640, 480, [5, 10, 5, 5])).toEqual({ x: 0, y: 0, w: 85, h: 100 });
  });

  it('refuses pads that are not four finite numbers', async () => {
    await expect(Wav2LipEngine.load({ modelPath: '/nonexistent.onnx', pads: [0, 10, 0] as unknown as [number, number, number, number] })).rejects.toThrow(/pads must be 4 finite numbers/);
  });
});
