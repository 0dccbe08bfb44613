/**
 * prepare failures: bad media (AssetError codes of the contract), limits, media URLs (fetched
 * through safeFetch from a local server), versions waiting for their transcript, and the
 * generate handler of this build.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AssetError, blobKeys, type PrepareAssetJob } from '@dub/core';
import { createJobHandlers, defaultStages, jobHandlers, prepareAsset, prepareVersion, type PrepareStages } from '@dub/pipeline';
import { loadTranslateConfig } from '@dub/translate';
import { loadHandlersModule } from '@dub/worker';
import { eventsOf, makeRuntime, spokenWav, videoFromWav } from './prepare-helpers.js';

const rt = makeRuntime();
let video: string;
let silentVideo: string;
let speechWav: string;
let server: http.Server;
let base: string;

beforeAll(async () => {
  speechWav = spokenWav('And so, my fellow Americans: ask not what your country can do for you. Ask what you can do for your country. My fellow citizens of the world: ask not what America will do for you, but what together we can do for the freedom of man.', path.join(rt.dir, 'speech.wav'));
  video = videoFromWav(speechWav, path.join(rt.dir, 'speech.mp4'));
  silentVideo = videoFromWav('', path.join(rt.dir, 'silent.mp4'), { audio: false });
  fs.writeFileSync(path.join(rt.dir, 'notes.txt'), 'this is not a video\n'.repeat(50));
  server = http.createServer((req, res) => {
    if (req.url === '/video.mp4') return fs.createReadStream(video).pipe(res.writeHead(200, { 'content-type': 'video/mp4' }));
    if (req.url === '/notes.txt') return fs.createReadStream(path.join(rt.dir, 'notes.txt')).pipe(res.writeHead(200));
    if (req.url === '/busy') return res.writeHead(503).end('busy');
    res.writeHead(404).end('no');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 120_000);

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
  fs.rmSync(rt.dir, { recursive: true, force: true });
});

let n = 0;
async function jobFor(file: string | undefined, extra: Partial<PrepareAssetJob> = {}): Promise<PrepareAssetJob> {
  const asset = `ast_err${++n}`;
  if (file) await rt.store.putFile(blobKeys.sourceUpload(asset), file);
  return { v: 1, type: 'prepare-asset', job_id: `job-${asset}`, asset_id: asset, locale: 'en-US', media: { blob: blobKeys.sourceUpload(asset) }, versions: [{ version_id: `ver_${asset}`, dubbing_id: 'dub', locale: 'es-ES' }], ...extra };
}

async function failure(job: PrepareAssetJob): Promise<{ name: string; code: string; retryable: boolean }> {
  const before = rt.jobs.length;
  const err = (await prepareAsset(job, rt).then(
    () => undefined,
    (e: unknown) => e,
  )) as { name: string; code: string; retryable: boolean };
  expect(err, 'prepare should have failed').toBeDefined();
  expect(rt.jobs.length).toBe(before);
  expect(await rt.store.has(blobKeys.transcript(job.asset_id))).toBe(false);
  return err;
}

describe('bad media', () => {
  it('a text file is unsupported_media', async () => {
    expect(await failure(await jobFor(path.join(rt.dir, 'notes.txt')))).toMatchObject({ name: 'AssetError', code: 'unsupported_media', retryable: false });
  });
  it('audio without video is unsupported_media', async () => {
    expect(await failure(await jobFor(speechWav))).toMatchObject({ code: 'unsupported_media' });
  });
  it('video without audio is missing_audio_track', async () => {
    expect(await failure(await jobFor(silentVideo))).toMatchObject({ code: 'missing_audio_track' });
  });
  it('a missing upload is invalid_input', async () => {
    expect(await failure(await jobFor(undefined))).toMatchObject({ code: 'invalid_input' });
  });
});

describe('trim and limits', () => {
  it('start_time past the end is time_out_of_range; end_time before start_time is invalid_input', async () => {
    expect(await failure(await jobFor(video, { start_time: 30 }))).toMatchObject({ code: 'time_out_of_range' });
    expect(await failure(await jobFor(video, { start_time: 5, end_time: 3 }))).toMatchObject({ code: 'invalid_input' });
    expect(await failure(await jobFor(video, { end_time: 40 }))).toMatchObject({ code: 'time_out_of_range' });
  });
  it('max_video_seconds gives video_duration_limit_reached (trimmed duration counts)', async () => {
    expect(await failure(await jobFor(video, { limits: { max_video_seconds: 5 } }))).toMatchObject({ code: 'video_duration_limit_reached' });
    expect(await failure(await jobFor(video, { start_time: 1, end_time: 8, limits: { max_video_seconds: 6.5 } }))).toMatchObject({ code: 'video_duration_limit_reached' });
  });
  it('max_media_bytes gives video_size_limit_reached', async () => {
    expect(await failure(await jobFor(video, { limits: { max_media_bytes: 1000 } }))).toMatchObject({ code: 'video_size_limit_reached' });
  });
});

describe('the trimmed video beside the audio stages', () => {
  it('the trim runs while the speech is transcribed (it waits for the transcription to start: run one after the other, this never ends)', async () => {
    let started!: () => void;
    const transcriptionStarted = new Promise<void>((r) => (started = r));
    const order: string[] = [];
    const stages: Partial<PrepareStages> = {
      async trim(...args) {
        await transcriptionStarted;
        order.push('trim');
        return defaultStages.trim(...args);
      },
      async transcribe(...args) {
        started();
        const r = await defaultStages.transcribe(...args);
        order.push('transcription');
        return r;
      },
    };
    const job = await jobFor(video);
    const res = await prepareAsset(job, rt, { stages });
    expect(order[0]).toBe('trim');
    expect(await rt.store.has(blobKeys.sourceVideo(job.asset_id))).toBe(true);
    expect(res.thumbnailKey).toBe(blobKeys.thumbnail(job.asset_id));
    expect(res.transcript.segments.length).toBeGreaterThan(0);
  }, 120_000);

  it('a failing trim fails the job with its error once the audio stages are done; no transcript, no version job', async () => {
    let transcribed = false;
    const stages: Partial<PrepareStages> = {
      async trim() {
        throw new AssetError('unsupported_media', 'the video stream cannot be copied');
      },
      async transcribe(...args) {
        const r = await defaultStages.transcribe(...args);
        transcribed = true;
        return r;
      },
    };
    const job = await jobFor(video);
    const before = rt.jobs.length;
    const err = await prepareAsset(job, rt, { stages }).then(
      () => undefined,
      (e: unknown) => e as AssetError,
    );
    expect(err).toMatchObject({ code: 'unsupported_media', message: 'the video stream cannot be copied' });
    expect(transcribed).toBe(true);
    expect(rt.jobs.length).toBe(before);
    expect(await rt.store.has(blobKeys.transcript(job.asset_id))).toBe(false);
    expect(await rt.store.has(blobKeys.sourceVideo(job.asset_id))).toBe(false);
  }, 120_000);
});

describe('media URLs', () => {
  it('a private address is refused unless the job allows it', async () => {
    const err = await failure(await jobFor(undefined, { media: { url: `${base}/video.mp4` } }));
    expect(err).toMatchObject({ code: 'media_fetch_failed', retryable: false });
  });
  it('fetches through safeFetch, caches the download and applies the size limit while streaming', async () => {
    const over = await failure(await jobFor(undefined, { media: { url: `${base}/video.mp4` }, limits: { allow_private_urls: true, max_media_bytes: 5000 } }));
    expect(over).toMatchObject({ code: 'video_size_limit_reached' });
    const notVideo = await jobFor(undefined, { media: { url: `${base}/notes.txt` }, limits: { allow_private_urls: true } });
    expect(await failure(notVideo)).toMatchObject({ code: 'unsupported_media' });
    const again = makeRuntime(rt.dir);
    await prepareAsset(notVideo, again).catch(() => undefined);
    expect(eventsOf(again, 'stage_done').find((e) => e.stage === 'fetch-media')).toMatchObject({ cached: true });
  });
  it('HTTP 404 fails for good, 503 is retryable', async () => {
    expect(await failure(await jobFor(undefined, { media: { url: `${base}/missing` }, limits: { allow_private_urls: true } }))).toMatchObject({ code: 'media_fetch_failed', retryable: false });
    expect(await failure(await jobFor(undefined, { media: { url: `${base}/busy` }, limits: { allow_private_urls: true } }))).toMatchObject({ code: 'media_fetch_failed', retryable: true });
  });
});

describe('versions and handlers', () => {
  it('prepare-version before the transcript exists is retryable', async () => {
    const err = await prepareVersion(
      { v: 1, type: 'prepare-version', job_id: 'ver_x-prepare', asset_id: 'ast_not_yet', source_locale: 'en-US', version: { version_id: 'ver_x', dubbing_id: 'dub', locale: 'es-ES' } },
      rt,
      { translate: loadTranslateConfig({}) },
    ).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'not_found', retryable: true });
  });

  it('generate-version of a version whose script does not exist fails without retry', async () => {
    const err = await createJobHandlers()['generate-version'](
      { v: 1, type: 'generate-version', job_id: 'g1', asset_id: 'a', version_id: 'ver_g', locale: 'es-ES', mode: 'no_lips', script_key: blobKeys.script('ver_g'), generation: 1, options: {} },
      rt,
    ).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'not_found', retryable: false });
  });

  it('the worker loads these handlers from @dub/pipeline', async () => {
    const mod = await loadHandlersModule('@dub/pipeline');
    expect(Object.keys(mod.handlers).sort()).toEqual(['generate-version', 'prepare-asset', 'prepare-version']);
    expect(mod.handlers['prepare-asset']).toBe(jobHandlers['prepare-asset']);
  });
});
