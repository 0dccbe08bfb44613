/**
 * Glossaries in the jobs (issue 23 item 5): `versions[].glossary` / `version.glossary` is an
 * optional field of job schema v1 (a job without it is still valid, a job with it is checked on
 * arrival), and the largest glossary the API accepts travels inline on the bus (NATS's default
 * max_payload) while the subtitle text beside it moves to the blob store.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FsBlobStore, GLOSSARY_LIMITS, parseJob, type PrepareAssetJob, type PrepareVersionJob } from '@dub/core';
import { DEFAULT_MAX_PAYLOAD_BYTES, fitJob, readJobTextFromBlobs } from './job-text.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-job-glossary-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const store = new FsBlobStore(dir);

/** The largest glossary the API takes: 200 terms of 100 characters, translations of 200 (multi-byte). */
const BIG = Array.from({ length: GLOSSARY_LIMITS.maxTerms }, (_, i) => ({ term: `${'t'.repeat(GLOSSARY_LIMITS.maxTermChars - 4)}${String(i).padStart(4, '0')}`, translation: 'ñ'.repeat(GLOSSARY_LIMITS.maxTranslationChars) }));

const job = (glossary?: unknown, srt?: string): PrepareAssetJob =>
  ({
    v: 1, type: 'prepare-asset', job_id: 'job-g', asset_id: 'ast-g', locale: 'en-US', media: { blob: 'assets/ast-g/upload/source' },
    versions: [{ version_id: 'ver-g', dubbing_id: 'dub-g', locale: 'es-ES', ...(srt !== undefined ? { srt } : {}), ...(glossary !== undefined ? { glossary } : {}) }],
  }) as PrepareAssetJob;

describe('glossaries in jobs', () => {
  it('is optional in schema v1: jobs without it stay valid; with it, it is checked', () => {
    expect(parseJob(job())).toEqual(job());
    expect(parseJob(job(BIG)).type).toBe('prepare-asset');
    const pv: PrepareVersionJob = { v: 1, type: 'prepare-version', job_id: 'j', asset_id: 'a', source_locale: 'en-US', version: { version_id: 'v', dubbing_id: 'd', locale: 'es-ES', glossary: [{ term: 'Vaultline', keep: true }] } };
    expect(parseJob(pv)).toEqual(pv);
    expect(() => parseJob(job([{ term: 'x', keep: false }]))).toThrow(/versions\/0\/glossary\/0\/keep/);
    expect(() => parseJob(job([...BIG, { term: 'one more', keep: true }]))).toThrow(/versions\/0\/glossary/);
  });

  it('the largest glossary stays inline under the bus limit; a large SRT beside it moves to the blob store', async () => {
    const fits = await fitJob(job(BIG), DEFAULT_MAX_PAYLOAD_BYTES, store);
    expect(fits.moved).toEqual([]);
    expect(Buffer.byteLength(fits.data)).toBeLessThan(DEFAULT_MAX_PAYLOAD_BYTES / 5);
    const srt = `1\n00:00:01,000 --> 00:00:02,000\n${'x'.repeat(DEFAULT_MAX_PAYLOAD_BYTES)}\n`;
    const moved = await fitJob(job(BIG, srt), DEFAULT_MAX_PAYLOAD_BYTES, store);
    expect(moved.moved).toHaveLength(1);
    const sent = JSON.parse(moved.data) as PrepareAssetJob;
    expect(sent.versions[0]!.glossary).toEqual(BIG);
    expect(await readJobTextFromBlobs(sent, store)).toEqual(job(BIG, srt));
  });
});
