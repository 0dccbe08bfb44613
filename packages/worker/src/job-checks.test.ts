import { silentLogger, type EmittedEvent, type Job } from '@dub/core';
import { describe, expect, it } from 'vitest';
import type { JobExecutor } from './executor.js';
import { jobLocaleError } from './job-checks.js';
import { runAttempt } from './job-runner.js';
import { resolveRunnerOptions } from './options.js';

const prepare = (locale: string, targets: string[]): Job => ({ v: 1, type: 'prepare-asset', job_id: 'j', asset_id: 'a', locale, media: { blob: 'x' }, versions: targets.map((l, i) => ({ version_id: `v${i}`, dubbing_id: `d${i}`, locale: l })) });

describe('a job is checked on arrival', () => {
  it('contract locales pass; others name the field and the role', () => {
    expect(jobLocaleError(prepare('en-US', ['es-ES', 'th-TH']))).toBeUndefined();
    expect(jobLocaleError(prepare('xx-XX', ['es-ES']))).toMatchObject({ code: 'invalid_input', message: expect.stringMatching(/^locale: "xx-XX" is not supported for its role \(source\)/) });
    // th-TH is a target only, he-IL a source only
    expect(jobLocaleError(prepare('th-TH', []))).toMatchObject({ code: 'invalid_input' });
    expect(jobLocaleError(prepare('en-US', ['es-ES', 'he-IL']))).toMatchObject({ code: 'invalid_input', message: expect.stringMatching(/^versions\[1\]\.locale: "he-IL" is not supported for its role \(target\)/) });
    expect(jobLocaleError({ v: 1, type: 'prepare-version', job_id: 'j', asset_id: 'a', source_locale: 'en-US', version: { version_id: 'v', dubbing_id: 'd', locale: 'xx' } })).toMatchObject({ code: 'unsupported_language_pair' });
    expect(jobLocaleError({ v: 1, type: 'generate-version', job_id: 'j', asset_id: 'a', version_id: 'v', locale: 'en-XX', mode: 'no_lips', script_key: 'k', generation: 1, options: {} })).toMatchObject({ code: 'unsupported_language_pair' });
  });

  it('a job with locale xx-XX fails invalid_input without its handler running (no stage, no retry)', async () => {
    let ran = 0;
    const executor: JobExecutor = { run: async () => void ran++ } as unknown as JobExecutor;
    const events: EmittedEvent[] = [];
    const out = await runAttempt(prepare('xx-XX', ['es-ES']), 1, { executor, options: resolveRunnerOptions({}), logger: silentLogger, emit: async (e) => void events.push(e), enqueue: async () => undefined, signal: new AbortController().signal });
    expect(ran).toBe(0);
    expect(events).toEqual([]);
    expect(out).toMatchObject({ kind: 'failed', event: { type: 'asset_failed', error: { error_code: 'invalid_input', detail: expect.stringMatching(/^locale: "xx-XX" is not supported for its role \(source\)/) } } });
    // a valid job runs
    expect(await runAttempt(prepare('en-US', ['es-ES']), 1, { executor, options: resolveRunnerOptions({}), logger: silentLogger, emit: async () => undefined, enqueue: async () => undefined, signal: new AbortController().signal })).toEqual({ kind: 'done' });
    expect(ran).toBe(1);
  });
});
