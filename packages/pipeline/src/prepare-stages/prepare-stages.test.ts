import { describe, expect, it } from 'vitest';
import { PREPARE_STAGES, PREPARE_WEIGHTS } from '../prepare-asset.js';
import { stageWeights } from '../pipeline-stage.js';
import { BesideWork } from './state.js';
import type { VersionState } from './version-state.js';

describe('the preparation as a list', () => {
  it('runs its stages in the order of the pipeline', () => {
    expect(PREPARE_STAGES.map((s) => s.name)).toEqual([
      'fetch-media', 'probe', 'trim', 'thumbnail', 'audio', 'fetch-speech', 'fetch-background',
      'separation-plan', 'separation', 'vad', 'transcription', 'speakers', 'transcript',
    ]);
  });

  it('lays out the progress shares as before the list (same weights, same order: the same fractions)', () => {
    expect(Object.entries(PREPARE_WEIGHTS)).toEqual(Object.entries({
      'fetch-media': 1, 'fetch-background': 0.5, 'fetch-speech': 0.5, probe: 0.2, trim: 2, thumbnail: 0.3, audio: 0.5,
      'separation-plan': 1, separation: 12, vad: 1, transcription: 6, speakers: 3, transcript: 0.1,
    }));
  });

  it('reads each stage input only after an earlier stage can have set it', () => {
    // what each stage returns, by the stage's name (its modules' return statements)
    const sets: Record<string, string[]> = {
      'fetch-media': ['media'], probe: ['info', 'range', 'duration'], trim: ['trimmed'], thumbnail: ['video'], audio: ['audio'],
      'fetch-speech': ['givenSpeech'], 'fetch-background': ['givenBackground'], 'separation-plan': ['vadEngine', 'separationEngine', 'planned', 'plan'],
      separation: ['separated', 'separationModel', 'separationGraph', 'speechKey'], vad: ['vad'], transcription: ['asr', 'recognition'],
      speakers: ['speakerEngine', 'speakers', 'referenceKeys'], transcript: ['transcript', 'transcriptKey', 'source'],
    };
    const set = new Set<string>(['prep']);
    for (const s of PREPARE_STAGES) {
      expect(s.inputs.filter((k) => !set.has(k)), s.name).toEqual([]);
      for (const k of sets[s.name]!) set.add(k);
    }
  });
});

describe('BesideWork', () => {
  it('waits for all the work and reports the first failure in the order started', async () => {
    const beside = new BesideWork();
    let lateDone = false;
    const first = beside.add(new Promise((_, reject) => setTimeout(() => reject(new Error('trim failed')), 20)));
    beside.add(first.then(() => 'thumbnail'));
    beside.add(new Promise((resolve) => setTimeout(() => resolve((lateDone = true)), 40)));
    expect((await beside.failure())?.error).toEqual(new Error('trim failed'));
    expect(lateDone).toBe(true);
    await expect(first).rejects.toThrow('trim failed');
  });

  it('reports no failure when all the work succeeded (or none was started)', async () => {
    const beside = new BesideWork();
    expect(await beside.failure()).toBeUndefined();
    beside.add(Promise.resolve(1));
    expect(await beside.failure()).toBeUndefined();
  });
});

describe('a version preparation as a list', () => {
  it('translates then writes the script, or copies one; the progress shares as before the lists', async () => {
    const { TRANSLATED, COPIED } = await import('../prepare-version.js');
    expect(TRANSLATED.map((s) => s.name)).toEqual(['transcript', 'translation', 'script']);
    expect(COPIED.map((s) => s.name)).toEqual(['script']);
    expect(Object.entries(stageWeights(TRANSLATED, {} as VersionState))).toEqual(Object.entries({ transcript: 0.1, translation: 5, script: 0.1 }));
  });
});
