import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { silentLogger, type StageContext } from '@dub/core';
import type { PlanarAudio } from '@dub/media';
import { createEspeakEngine, DEFAULT_VOICE, toMono, trimSilence, type SynthesisRequest, type TtsEngine } from '@dub/voice';
import { fitSegment } from './generate-segments.js';

const ctx: StageContext = { logger: silentLogger };
const TEXT = 'La reunión empieza a las nueve y media en la sala grande.';
const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-fit-segment-'));
afterAll(() => fs.rmSync(tmpDir, { recursive: true, force: true }));

/** espeak-ng with its calls counted (their speeds). */
function counted(): { engine: TtsEngine; speeds: number[] } {
  const inner = createEspeakEngine();
  const speeds: number[] = [];
  const engine: TtsEngine = {
    id: inner.id,
    label: inner.label,
    capabilities: inner.capabilities,
    supportsLocale: (l) => inner.supportsLocale(l),
    synthesize: (r: SynthesisRequest, c: StageContext): Promise<PlanarAudio> => (speeds.push(r.speed), inner.synthesize(r, c)),
    dispose: () => inner.dispose(),
  };
  return { engine, speeds };
}

const req = { locale: 'es-ES', voice: DEFAULT_VOICE, stretcher: 'atempo' as const, media: {}, tmpDir, speedLimit: 1.6 };

describe('fitSegment of a line whose length at speed 1 is predicted', () => {
  it('speaks the line once when the prediction is right, twice when it is far off; the record says which', async () => {
    const probe = counted();
    const a = await probe.engine.synthesize({ text: TEXT, locale: 'es-ES', voice: DEFAULT_VOICE, speed: 1 }, ctx);
    const natural = trimSilence(toMono(a), a.sampleRate).length / a.sampleRate;

    const good = counted();
    const once = await fitSegment(good.engine, TEXT, { predicted: natural * 1.02 }, natural, natural, req, ctx);
    expect(good.speeds).toEqual([1]);
    expect(once).toMatchObject({ passes: 1, natural: 'measured', speed: 1 });
    expect(once.durationSeconds).toBeCloseTo(natural, 2);

    const bad = counted();
    const target = natural / 1.25;
    const twice = await fitSegment(bad.engine, TEXT, { predicted: natural * 1.6 }, target, target, req, ctx);
    expect(bad.speeds).toHaveLength(2);
    expect(twice.passes).toBe(2);
    expect(twice.natural).toBe('predicted');
    expect(twice.speed).toBe(bad.speeds[1]);
    // speeds count from the prediction; the line fills its time
    expect(twice.speedFactor).toBeCloseTo((natural * 1.6) / twice.speechSeconds, 6);
    expect(twice.durationSeconds).toBeCloseTo(target, 2);
  });

  it('the line at speed 1 (measured) is spoken again once when its time asks for another speed', async () => {
    const { engine, speeds } = counted();
    const a = await engine.synthesize({ text: TEXT, locale: 'es-ES', voice: DEFAULT_VOICE, speed: 1 }, ctx);
    const natural = trimSilence(toMono(a), a.sampleRate).length / a.sampleRate;
    const r = await fitSegment(engine, TEXT, a, natural / 1.3, natural / 1.3, req, ctx);
    expect(speeds).toEqual([1, expect.closeTo(1.3, 2)]);
    expect(r).toMatchObject({ passes: 1, natural: 'measured' });
  });
});
