import { describe, expect, it } from 'vitest';
import { linesThreads, qualityThreads } from './generate-quality-stage.js';

describe('the quality measurements\' threads', () => {
  it('half the cores where the job releases its models, the operator\'s count when set', () => {
    expect(linesThreads(0, 2)).toBe(1);
    expect(linesThreads(0, 1)).toBe(1);
    expect(linesThreads(0, 16)).toBe(8);
    expect(linesThreads(3, 2)).toBe(3);
    expect(qualityThreads({ keepModels: false, onnxThreads: 0 }, 2)).toBe(1);
    expect(qualityThreads({ keepModels: false, onnxThreads: 4 }, 2)).toBe(4);
  });

  it('the configured threads where models stay loaded (serve, worker): the source transcription\'s session', () => {
    expect(qualityThreads({ keepModels: true, onnxThreads: 0 }, 2)).toBe(0);
    expect(qualityThreads({ onnxThreads: 0 }, 16)).toBe(0);
    expect(qualityThreads({ keepModels: true, onnxThreads: 2 }, 16)).toBe(2);
  });
});
