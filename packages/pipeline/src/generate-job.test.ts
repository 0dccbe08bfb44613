/**
 * resolveGenerateJob (generate-job.ts): the job resolved once at the start of a generation gives
 * the stages the same keys, locale and option defaults they derived from the job themselves.
 */
import { describe, expect, it } from 'vitest';
import { blobKeys, getLocale, type GenerateVersionJob } from '@dub/core';
import { resolveGenerateJob } from './generate-job.js';

const job = (over: Partial<GenerateVersionJob> = {}): GenerateVersionJob => ({
  v: 1,
  type: 'generate-version',
  job_id: 'job-1',
  asset_id: 'asset-1',
  version_id: 'version-1',
  locale: 'es-ES',
  mode: 'no_lips',
  script_key: 'versions/version-1/script.json',
  generation: 3,
  options: {},
  ...over,
});

describe('resolveGenerateJob', () => {
  it("gives every key of the generation as blobKeys makes it, and the job's script key", () => {
    const r = resolveGenerateJob(job());
    expect(r.keys).toEqual({
      sourceVideo: blobKeys.sourceVideo('asset-1'),
      transcript: blobKeys.transcript('asset-1'),
      script: 'versions/version-1/script.json',
      resultVideo: blobKeys.resultVideo('version-1', 3),
      resultAudio: blobKeys.resultAudio('version-1', 3),
      qualityReport: blobKeys.qualityReport('version-1', 3),
    });
    expect({ assetId: r.assetId, versionId: r.versionId, generation: r.generation, locale: r.locale }).toEqual({ assetId: 'asset-1', versionId: 'version-1', generation: 3, locale: 'es-ES' });
    expect(r.target).toBe(getLocale('es-ES'));
  });

  it('applies the options’ defaults once: no voice-over, no library voice, no anonymization, real_face lips', () => {
    expect(resolveGenerateJob(job())).toMatchObject({ mode: 'no_lips', withLips: false, voiceOver: false, voiceLibraryId: undefined, anonymization: 0, lipsModel: 'real_face' });
    const given = resolveGenerateJob(job({ mode: 'with_lips', options: { voice_over: true, voice_library_id: 'lib-7', voice_anonymization: 0.4, lips_model: 'real_face_turbo' } }));
    expect(given).toMatchObject({ withLips: true, voiceOver: true, voiceLibraryId: 'lib-7', anonymization: 0.4, lipsModel: 'real_face_turbo' });
  });

  it('leaves a locale the list does not know without an entry (generateVersion refuses it)', () => {
    expect(resolveGenerateJob(job({ locale: 'xx-XX' })).target).toBeUndefined();
  });
});
