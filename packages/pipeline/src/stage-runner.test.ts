import { describe, expect, it } from 'vitest';
import { reportProgress, silentLogger, type JobRuntime, type Progress } from '@dub/core';
import type { ArtifactCache } from './artifacts.js';
import { StageRunner } from './stage-runner.js';

describe('StageRunner progress', () => {
  it('maps each stage into its share and passes on no report below the job\'s progress so far (overlapping stages)', () => {
    const seen: Progress[] = [];
    const rt = { ctx: { logger: silentLogger, onProgress: (p: Progress) => void seen.push(p) } } as unknown as JobRuntime;
    const runner = new StageRunner(rt, {} as ArtifactCache, { type: 'prepare-asset' }, { weights: { probe: 1, trim: 1, audio: 2 } });
    reportProgress(runner.context('probe'), 'probe', 1);
    reportProgress(runner.context('trim'), 'trim', 0.5);
    reportProgress(runner.context('audio'), 'audio', 0);
    reportProgress(runner.context('audio'), 'audio', 0.2);
    // the trim, beside the audio stage, moves on: below the job's progress, not passed on
    reportProgress(runner.context('trim'), 'trim', 1);
    reportProgress(runner.context('audio'), 'audio', 0.5);
    expect(seen.map((p) => [p.stage, p.fraction])).toEqual([
      ['probe', 0.25],
      ['trim', 0.375],
      ['audio', 0.5],
      ['audio', 0.6],
      ['audio', 0.75],
    ]);
  });

  it('reports each stage at its start, so a display times a slow stage from when it begins', async () => {
    const seen: [string, number][] = [];
    const rt = { ctx: { logger: silentLogger, onProgress: (p: Progress) => void seen.push([p.stage ?? '', p.fraction]) }, emit: async () => undefined } as unknown as JobRuntime;
    const cache = { run: async (_s: string, _i: unknown, _c: unknown, produce: (out: unknown) => Promise<unknown>) => ({ value: await produce({}), cached: false, files: {}, key: 'k' }) } as unknown as ArtifactCache;
    const runner = new StageRunner(rt, cache, { type: 'prepare-asset' }, { weights: { plan: 1, separation: 3 } });
    await runner.run('plan', {}, async () => null);
    // the separation's own first report comes late (after a model window): its start is reported before
    await runner.run('separation', {}, async () => {
      expect(seen.at(-1)).toEqual(['separation', 0.25]);
      return null;
    });
    expect(seen).toEqual([
      ['plan', 0],
      ['plan', 0.25],
      ['separation', 0.25],
      ['separation', 1],
    ]);
  });
});

