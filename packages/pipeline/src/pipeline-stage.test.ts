import { describe, expect, it } from 'vitest';
import { runStages, stageWeights, type PipelineStage } from './pipeline-stage.js';

interface S {
  n: number;
  doubled?: number;
  lips: boolean;
  label?: string;
}

const double: PipelineStage<S> = { name: 'double', weight: 2, inputs: ['n'], run: async (s) => ({ doubled: s.n * 2 }) };
const label: PipelineStage<S> = { name: 'label', weight: 1, inputs: ['doubled'], run: async (s) => ({ label: `n=${s.doubled}` }) };
const lips: PipelineStage<S> = { name: 'lips', weight: 9, inputs: ['n'], when: (s) => s.lips, run: async (s) => ({ n: s.n + 100 }) };

describe('runStages', () => {
  it('runs the stages in order, each reading what the ones before added', async () => {
    const out = await runStages([double, label], { n: 3, lips: false });
    expect(out).toEqual({ n: 3, doubled: 6, lips: false, label: 'n=6' });
  });

  it('skips a stage whose `when` is false, and gives it no progress weight', async () => {
    expect(await runStages([lips, double], { n: 1, lips: false })).toMatchObject({ n: 1, doubled: 2 });
    expect(await runStages([lips, double], { n: 1, lips: true })).toMatchObject({ n: 101, doubled: 202 });
    expect(stageWeights([double, lips, label], { n: 0, lips: false })).toEqual({ double: 2, label: 1 });
    expect(stageWeights([double, lips, label], { n: 0, lips: true })).toEqual({ double: 2, lips: 9, label: 1 });
  });

  it('gives a stage with `progress` the weights of the names it reports under, in order', () => {
    const parts: PipelineStage<S> = { name: 'parts', weight: 3, inputs: [], progress: { source: 1, voices: 2 }, run: async () => ({}) };
    const quiet: PipelineStage<S> = { name: 'quiet', weight: 0, inputs: [], progress: {}, run: async () => ({}) };
    const w = stageWeights([parts, quiet, double], { n: 0, lips: false });
    expect(w).toEqual({ source: 1, voices: 2, double: 2 });
    expect(Object.keys(w)).toEqual(['source', 'voices', 'double']);
  });

  it('refuses a stage placed before the stage that sets its inputs', async () => {
    await expect(runStages([label, double], { n: 3, lips: false })).rejects.toThrow('stage label runs before its inputs are set: doubled');
  });
});
