import { describe, expect, it } from 'vitest';
import { ValidationError, parseJob, parseWorkerEvent, jobSubject, eventSubject, blobKeys } from './index.js';

const prepareAsset = {
  v: 1, type: 'prepare-asset', job_id: 'job_1', asset_id: 'ast_1', locale: 'en-US',
  media: { blob: 'assets/ast_1/upload/source' },
  versions: [{ version_id: 'ver_1', dubbing_id: 'dub_1', locale: 'es-ES' }],
};

describe('job contracts', () => {
  it('accepts valid jobs of each type', () => {
    expect(parseJob(prepareAsset).type).toBe('prepare-asset');
    expect(parseJob({ v: 1, type: 'prepare-version', job_id: 'j', asset_id: 'a', source_locale: 'en-US', version: { version_id: 'v', dubbing_id: 'd', locale: 'es-ES' } }).type).toBe('prepare-version');
    expect(parseJob({ v: 1, type: 'generate-version', job_id: 'j', asset_id: 'a', version_id: 'v', locale: 'es-ES', mode: 'no_lips', script_key: 'versions/v/script.json', generation: 1, options: {} }).type).toBe('generate-version');
  });
  it('rejects invalid jobs with the path of the problem', () => {
    expect(() => parseJob({ ...prepareAsset, v: 2 })).toThrow(ValidationError);
    expect(() => parseJob({ ...prepareAsset, media: {} })).toThrow(/media/);
    expect(() => parseJob({ ...prepareAsset, speakers_count: 0 })).toThrow(/speakers_count/);
    expect(() => parseJob({ v: 1, type: 'generate-version', job_id: 'j', asset_id: 'a', version_id: 'v', locale: 'es-ES', mode: 'sideways', script_key: 'k', generation: 1, options: {} })).toThrow(/mode/);
    expect(() => parseJob('nonsense')).toThrow(ValidationError);
  });
  it('validates worker events', () => {
    expect(parseWorkerEvent({ v: 1, type: 'asset_failed', job_id: 'j', asset_id: 'a', at: 't', error: { error_code: 'missing_audio_track', detail: 'no audio' } }).type).toBe('asset_failed');
    expect(() => parseWorkerEvent({ v: 1, type: 'asset_failed', job_id: 'j', asset_id: 'a', at: 't', error: { error_code: 'made_up', detail: 'x' } })).toThrow(ValidationError);
    expect(() => parseWorkerEvent({ v: 1, type: 'progress', job_id: 'j', asset_id: 'a', at: 't', job_type: 'prepare-asset', stage: 's', fraction: 1.5 })).toThrow(ValidationError);
  });
  it('names subjects and blob keys', () => {
    expect(jobSubject('prepare-asset')).toBe('dub.jobs.prepare-asset');
    expect(eventSubject('ast_1')).toBe('dub.events.ast_1');
    expect(blobKeys.resultVideo('ver_1', 3)).toBe('versions/ver_1/gen-3/result.mp4');
    expect(blobKeys.resultVideo('ver_1', 3).startsWith(blobKeys.resultPrefix('ver_1'))).toBe(true);
  });
});
