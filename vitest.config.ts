import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const root = path.dirname(fileURLToPath(import.meta.url));

/**
 * The test files in order of their last measured length (test/durations.json, written by
 * scripts/test-durations.mjs from a full run), longest first, files not listed there before all:
 * with two workers, a long file that starts last would end the run alone. vitest's own order
 * needs its results cache, which a fresh clone (CI) does not have; it then starts the largest
 * files first, and several of the longest files are small.
 */
class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    let seconds: Record<string, number> = {};
    try {
      seconds = JSON.parse(fs.readFileSync(path.join(root, 'test', 'durations.json'), 'utf8')) as Record<string, number>;
    } catch {
      return super.sort(files);
    }
    const key = (f: TestSpecification) => path.relative(root, f.moduleId).split(path.sep).join('/');
    const weight = (f: TestSpecification) => seconds[key(f)] ?? Number.POSITIVE_INFINITY;
    return [...files].sort((a, b) => weight(b) - weight(a) || (key(a) < key(b) ? -1 : 1));
  }
}

export default defineConfig({
  test: {
    include: ['packages/*/src/**/*.test.ts', 'test/**/*.test.ts'],
    exclude: ['**/node_modules/**', '**/dist/**'],
    pool: 'forks',
    testTimeout: 120_000,
    hookTimeout: 120_000,
    fileParallelism: true,
    maxWorkers: 2,
    sequence: { sequencer: LongestFirst },
  },
});
