/**
 * The generation's list of stages (generate.ts GENERATE_STAGES): the progress shares and their
 * order are the ones generations always had (StageRunner maps each name into its share of [0, 1]
 * in this order), and every stage's inputs are set by a stage before it or by the setup.
 */
import { describe, expect, it } from 'vitest';
import { GENERATE_STAGES } from '../generate.js';
import { stageWeights } from '../pipeline-stage.js';
import type { GenerateState } from './state.js';

const WEIGHTS = { source: 0.3, voices: 1, synthesis: 6, timeline: 0.5, background: 4, mix: 2, audio: 0.5, video: 1, quality: 2, publish: 0.2 };
const WEIGHTS_WITH_LIPS = { source: 0.3, voices: 1, synthesis: 6, timeline: 0.5, background: 4, mix: 2, audio: 0.5, faces: 3, lips: 9, video: 1, quality: 2, publish: 0.2 };

describe('GENERATE_STAGES', () => {
  it('gives each progress name its share, in the order generations report them, with and without lips', () => {
    const plain = stageWeights(GENERATE_STAGES, { withLips: false } as GenerateState);
    expect(plain).toEqual(WEIGHTS);
    expect(Object.keys(plain)).toEqual(Object.keys(WEIGHTS));
    const lips = stageWeights(GENERATE_STAGES, { withLips: true } as GenerateState);
    expect(lips).toEqual(WEIGHTS_WITH_LIPS);
    expect(Object.keys(lips)).toEqual(Object.keys(WEIGHTS_WITH_LIPS));
  });

  it('runs the stages in the order of the pipeline, each after the stages that set its inputs', () => {
    expect(GENERATE_STAGES.map((s) => s.name)).toEqual(['synthesis', 'timeline', 'release-tts', 'quality-plan', 'background', 'mix', 'audio', 'lips', 'video', 'quality', 'publish', 'report', 'redub-state', 'event']);
    // what each stage adds (read from the stage modules' returns would need a run; the state's fields by the stage that sets them)
    const setBy: Record<string, string> = {
      synth: 'synthesis', voiced: 'synthesis', speechKey: 'timeline', qualityPlan: 'quality-plan', mixed: 'mix', normalization: 'mix',
      linesMeasured: 'quality-plan', audio: 'audio', audioKey: 'audio', resultMp4: 'video', trackLoudness: 'video', stopTrackLoudness: 'video',
      quality: 'quality', resultVideoKey: 'publish', resultAudioKey: 'publish', engines: 'report', report: 'report', reportKey: 'report',
    };
    const order = GENERATE_STAGES.map((s) => s.name);
    for (const s of GENERATE_STAGES) for (const input of s.inputs) expect(order.indexOf(setBy[input]!), `${s.name} reads ${input}`).toBeLessThan(order.indexOf(s.name));
  });
});
