import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FsBlobStore, isDubError, parseJob, type GenerateVersionJob, type PrepareAssetJob, type PrepareVersionJob } from '@dub/core';
import { fitJob, JOB_PAYLOAD_MARGIN_BYTES, jobTextKey, readJobTextFromBlobs } from './job-text.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-job-text-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const store = new FsBlobStore(dir);

const asset = (source?: string, srt?: string): PrepareAssetJob => ({
  v: 1,
  type: 'prepare-asset',
  job_id: 'job-1',
  asset_id: 'ast-1',
  locale: 'en-US',
  media: { blob: 'assets/ast-1/upload/source' },
  ...(source !== undefined ? { source_srt: source } : {}),
  versions: [
    { version_id: 'ver-1', dubbing_id: 'dub-1', locale: 'es-ES', ...(srt !== undefined ? { srt } : {}) },
    { version_id: 'ver-2', dubbing_id: 'dub-2', locale: 'fr-FR' },
  ],
});
const LIMIT = 64 * 1024;

describe('fitJob / readJobTextFromBlobs', () => {
  it('leaves a job that fits as it is, byte for byte', async () => {
    const job = asset('1\n00:00:01,000 --> 00:00:02,000\nhi\n', 'x'.repeat(1000));
    const r = await fitJob(job, LIMIT, store);
    expect(r.moved).toEqual([]);
    expect(r.data).toBe(JSON.stringify(job));
  });

  it('moves every inline SRT of a job over the limit less the margin, and reads them back to the same job', async () => {
    const source = 'é'.repeat(20 * 1024); // 40 KiB of UTF-8 in 20 Ki characters: bytes count, not characters
    const srt = '字'.repeat(5 * 1024);
    const job = asset(source, srt);
    expect(JSON.stringify(job).length).toBeLessThan(LIMIT - JOB_PAYLOAD_MARGIN_BYTES);
    const r = await fitJob(job, LIMIT, store);
    expect(r.moved).toEqual([jobTextKey('ast-1', source), jobTextKey('ast-1', srt)]);
    const sent = parseJob(JSON.parse(r.data)) as PrepareAssetJob;
    expect(sent.source_srt).toBeUndefined();
    expect(sent.source_srt_key).toMatch(/^assets\/ast-1\/job-text\/[0-9a-f]{64}\.srt$/);
    expect(sent.versions[0]).toEqual({ version_id: 'ver-1', dubbing_id: 'dub-1', locale: 'es-ES', srt_key: jobTextKey('ast-1', srt) });
    expect(sent.versions[1]).toEqual(job.versions[1]);
    expect(await readJobTextFromBlobs(sent, store)).toEqual(job);
  });

  it('moves a prepare-version job\'s text too; a generate-version job has none to move', async () => {
    const pv: PrepareVersionJob = { v: 1, type: 'prepare-version', job_id: 'job-2', asset_id: 'ast-1', source_locale: 'en-US', version: { version_id: 'ver-1', dubbing_id: 'dub-1', locale: 'es-ES', srt: 'y'.repeat(LIMIT) } };
    const r = await fitJob(pv, LIMIT, store);
    expect((JSON.parse(r.data) as PrepareVersionJob).version.srt_key).toBe(jobTextKey('ast-1', pv.version.srt!));
    expect(await readJobTextFromBlobs(JSON.parse(r.data) as PrepareVersionJob, store)).toEqual(pv);
    const gv: GenerateVersionJob = { v: 1, type: 'generate-version', job_id: 'job-3', asset_id: 'ast-1', version_id: 'ver-1', locale: 'es-ES', mode: 'no_lips', script_key: 'versions/ver-1/script.json', generation: 1, options: {} };
    const err = await fitJob(gv, 100, store).catch((e: unknown) => e);
    expect(isDubError(err) && err.code).toBe('payload_too_large');
    expect((err as Error).message).toMatch(/has no inline subtitle text to move/);
  });

  it('refuses a job over the limit without a store, or still over it with its text moved, naming the sizes', async () => {
    const big = asset('z'.repeat(LIMIT));
    const noStore = await fitJob(big, LIMIT, undefined).catch((e: unknown) => e);
    expect(isDubError(noStore) && noStore.code).toBe('payload_too_large');
    expect(isDubError(noStore) && noStore.retryable).toBe(false);
    expect((noStore as Error).message).toMatch(/^job job-1 is \d+ bytes, over the bus's message limit of 65536 bytes \(less 16384 for headers\).*no blob store/);
    const tiny = await fitJob(big, JOB_PAYLOAD_MARGIN_BYTES + 100, store).catch((e: unknown) => e);
    expect((tiny as Error).message).toMatch(/with its subtitle text moved to the blob store .* still over/);
  });

  it('fails a job whose key names no blob (asset error invalid_input), and one with both a text and its key', async () => {
    const missing = { ...asset(), source_srt_key: 'assets/ast-1/job-text/missing.srt' };
    const e1 = await readJobTextFromBlobs(missing, store).catch((e: unknown) => e);
    expect(isDubError(e1) && e1.code).toBe('invalid_input');
    expect((e1 as Error).message).toMatch(/source_srt_key: blob "assets\/ast-1\/job-text\/missing.srt" not found/);
    const both = { ...asset('a'), source_srt_key: jobTextKey('ast-1', 'a') };
    const e2 = await readJobTextFromBlobs(both, store).catch((e: unknown) => e);
    expect(isDubError(e2) && e2.code).toBe('validation_error');
  });
});
