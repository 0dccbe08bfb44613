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
});
