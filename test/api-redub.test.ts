/**
 * The one-line endpoints of the API (routes/segments.ts) on a real source video and the real
 * synthesis (espeak-ng through @dub/pipeline's generation code, in the API's line-synthesis
 * thread): POST /v1/versions/{id}/segments/{segment_id}/redub answers a playable WAV of the line
 * as placed, from the cache the second time; POST /v1/versions/{id}/speakers/{speaker_id}/preview
 * answers a WAV of the voice a choice gives; both with the API key or the version's signed studio
 * link; every bad request is a 4xx with {detail}.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { blobKeys, FsBlobStore, type BlobStore } from '@dub/core';
import { decodeWav } from '@dub/media';
import { speechExtent } from '@dub/voice';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createBody, prepareAsset, startTestApi, type TestApi } from './api-helpers.js';

describe('re-dub one line and voice previews', () => {
  let t: TestApi;
  let assetId: string;
  let versionId: string;
  let otherVersionId: string;
  let token: string;

  const post = (url: string, payload: unknown, headers: Record<string, string> = t.auth1) => t.api.app.inject({ method: 'POST', url, headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(payload) });
  const redub = (segment: string, payload: unknown = {}, headers?: Record<string, string>, query = '') => post(`/v1/versions/${versionId}/segments/${segment}/redub${query}`, payload, headers);
  const seconds = (body: Buffer) => {
    const a = decodeWav(new Uint8Array(body));
    return a.channels[0]!.length / a.sampleRate;
  };
  /** Seconds of speech in a WAV (the line is padded to its placed time). */
  const speech = (body: Buffer) => {
    const a = decodeWav(new Uint8Array(body));
    const e = speechExtent(a.channels[0]!, a.sampleRate);
    return (e.end - e.start) / a.sampleRate;
  };

  beforeAll(async () => {
    // these tests are about the endpoints, timed for espeak-ng's lines: chosen explicitly (auto speaks Spanish with Kokoro)
    vi.stubEnv('DUB_TTS_ENGINE', 'espeak-ng');
    t = await startTestApi('pglite');
    const mk = async () => {
      const r = await t.api.app.inject({ method: 'POST', url: '/v1/assets/', headers: t.auth1, payload: createBody() });
      return { assetId: r.json().asset_id as string, versionId: r.json().languages[0].versions[0].version_id as string };
    };
    ({ assetId, versionId } = await mk());
    await prepareAsset(t, assetId, { duration: 12 });
    otherVersionId = (await mk()).versionId;
    // a real 12 s source video (generation probes it for the duration lines are placed in)
    const video = path.join(t.dataDir, 'source.mp4');
    execFileSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'color=c=navy:s=160x120:r=10', '-f', 'lavfi', '-i', 'anullsrc=r=16000:cl=mono', '-t', '12', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', video]);
    await t.api.store.put(blobKeys.sourceVideo(assetId), fs.readFileSync(video));
    const r = await post(`/v1/versions/${versionId}/studio_url`, { expiration_minutes: 60 });
    token = new URL(r.json().studio_url).search;
  }, 120_000);
  afterAll(async () => {
    vi.unstubAllEnvs();
    await t?.close();
  });

  it('answers the line as placed, as a WAV; the same line again comes from the cache; an edited text is synthesized anew', async () => {
    const t0 = performance.now();
    const first = await redub('s1');
    expect(first.statusCode, first.body).toBe(200);
    expect(first.headers['content-type']).toBe('audio/wav');
    expect(first.headers['x-dub-regenerated']).toBe('true');
    expect(first.headers['x-dub-tts-engine']).toBe('espeak-ng');
    expect(Number(first.headers['x-dub-start'])).toBeCloseTo(0.5, 3);
    // both lines were synthesized at speed 1 to place this one (nothing was generated before)
    expect(first.headers['x-dub-others-synthesized']).toBe('1');
    const placed = Number(first.headers['x-dub-end']) - Number(first.headers['x-dub-start']);
    expect(seconds(first.rawPayload)).toBeCloseTo(placed, 2);
    expect(performance.now() - t0).toBeLessThan(30_000);

    const again = await redub('s1');
    expect(again.statusCode).toBe(200);
    expect(again.headers['x-dub-regenerated']).toBe('false');
    expect(again.headers['x-dub-others-synthesized']).toBe('0');
    expect(Buffer.compare(again.rawPayload, first.rawPayload)).toBe(0);

    // a much shorter text (not saved) is a different line with much less speech, in the same placed time
    const edited = await redub('s1', { text: 'Hola.' });
    expect(edited.statusCode).toBe(200);
    expect(edited.headers['x-dub-regenerated']).toBe('true');
    expect(speech(first.rawPayload)).toBeGreaterThan(1);
    expect(speech(edited.rawPayload)).toBeLessThan(0.6 * speech(first.rawPayload));
    // unsaved times (a dragged edge): the line is placed and fitted there
    const moved = await redub('s1', { start: 1, end: 3.5 });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(Number(moved.headers['x-dub-start'])).toBeCloseTo(1, 3);
    expect(seconds(moved.rawPayload)).toBeCloseTo(Number(moved.headers['x-dub-end']) - 1, 2);
    const script = (await t.api.app.inject({ method: 'GET', url: `/v1/versions/${versionId}/script`, headers: t.auth1 })).json();
    expect(script.segments[0]).toMatchObject({ start: 0.5, end: 3.2, target_text: 'Hola y bienvenidos al programa.' });
  }, 120_000);

  it("the version's signed studio link may re-dub its own version only", async () => {
    const r = await redub('s2', {}, {}, token);
    expect(r.statusCode, r.body).toBe(200);
    expect(seconds(r.rawPayload)).toBeGreaterThan(0.5);
    const other = await post(`/v1/versions/${otherVersionId}/segments/s1/redub${token}`, {}, {});
    expect(other.statusCode).toBe(403);
  }, 120_000);

  it('bad requests are 4xx with {detail}', async () => {
    const cases: [string, Promise<{ statusCode: number; json(): { detail?: string } }>, number, RegExp][] = [
      ['no key', redub('s1', {}, {}), 401, /API key/],
      ['another organization', redub('s1', {}, t.auth2), 404, /not found/],
      ['not a version id', post('/v1/versions/nope/segments/s1/redub', {}), 404, /not found/],
      ['unknown segment', redub('s9'), 404, /segment "s9" is not in the script/],
      ['empty text', redub('s1', { text: '' }), 400, /text/],
      ['blank text', redub('s1', { text: '   ' }), 400, /text: the text to speak is empty/],
      ['text too long', redub('s1', { text: 'a'.repeat(2001) }), 400, /text/],
      ['text not a string', redub('s1', { text: 42 }), 400, /text/],
      ['unknown field', redub('s1', { voice: 'x' }), 400, /voice|additional/],
      ['unknown speaker', redub('s1', { speaker: 'S9' }), 400, /speaker: "S9" is not one of the script's speakers/],
      ['end before start', redub('s1', { start: 3, end: 2 }), 400, /segment s1 has no time \(start 3, end 2\)/],
      ['negative start', redub('s1', { start: -1 }), 400, /start/],
      ['start not a number', redub('s1', { start: '1' }), 400, /start/],
      ['body not JSON', t.api.app.inject({ method: 'POST', url: `/v1/versions/${versionId}/segments/s1/redub`, headers: { ...t.auth1, 'content-type': 'application/json' }, payload: '{' }), 400, /JSON|body/],
    ];
    for (const [what, p, status, detail] of cases) {
      const r = await p;
      expect(r.statusCode, what).toBe(status);
      expect(r.json().detail, what).toMatch(detail);
    }
  }, 120_000);

  it('a speaker preview speaks the voice a choice gives, without saving it; bad choices are 400, unknown speakers 404', async () => {
    const url = `/v1/versions/${versionId}/speakers/S1/preview`;
    const own = await post(url, {});
    expect(own.statusCode, own.body).toBe(200);
    expect(own.headers['content-type']).toBe('audio/wav');
    // S1 has no reference clip here: the planned voice is the default one
    expect(own.headers['x-dub-voice-source']).toBe('default');
    expect(seconds(own.rawPayload)).toBeGreaterThan(0.5);
    const library = await post(url, { voice: { source: 'library', library_voice_id: 'ana' }, text: 'Hola, soy Ana.' });
    expect(library.statusCode).toBe(200);
    expect(library.headers['x-dub-voice-source']).toBe('library:ana');
    const link = await post(`${url}${token}`, { voice: { source: 'anonymized' } }, {});
    expect(link.statusCode).toBe(200);
    const script = (await t.api.app.inject({ method: 'GET', url: `/v1/versions/${versionId}/script`, headers: t.auth1 })).json();
    expect(script.speakers).toEqual([{ id: 'S1' }]);

    const cases: [string, unknown, number, RegExp, string?][] = [
      ['unknown library voice', { voice: { source: 'library', library_voice_id: 'nobody' } }, 400, /unknown voice "nobody"/],
      ['library without id', { voice: { source: 'library' } }, 400, /library_voice_id/],
      ['unknown source', { voice: { source: 'robot' } }, 400, /voice/],
      ['anonymization out of range', { voice: { source: 'anonymized', anonymization: 2 } }, 400, /voice/],
      ['blank text', { text: ' ' }, 400, /text/],
      ['unknown speaker', {}, 404, /speaker "S7" is not in the script/, `/v1/versions/${versionId}/speakers/S7/preview`],
    ];
    for (const [what, body, status, detail, at] of cases) {
      const r = await post(at ?? url, body);
      expect(r.statusCode, what).toBe(status);
      expect(r.json().detail, what).toMatch(detail);
    }
  }, 120_000);

  it("the library voices for the picker: with the key or the version's link", async () => {
    const byLink = await t.api.app.inject({ method: 'GET', url: `/v1/versions/${versionId}/voices${token}` });
    expect(byLink.statusCode).toBe(200);
    expect(byLink.json().locale).toBe('es-ES');
    expect(byLink.json().voices.find((v: { voice_id: string }) => v.voice_id === 'ana')).toMatchObject({ voice_id: 'ana', speaks_locale: true });
    expect((await t.api.app.inject({ method: 'GET', url: `/v1/versions/${versionId}/voices`, headers: t.auth1 })).statusCode).toBe(200);
    expect((await t.api.app.inject({ method: 'GET', url: `/v1/versions/${versionId}/voices` })).statusCode).toBe(401);
    expect((await t.api.app.inject({ method: 'GET', url: `/v1/versions/${versionId}/voices`, headers: t.auth2 })).statusCode).toBe(404);
    expect((await t.api.app.inject({ method: 'GET', url: `/v1/versions/${otherVersionId}/voices${token}` })).statusCode).toBe(403);
  });

  it('the routes are in the OpenAPI document', async () => {
    const doc = (await t.api.app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, { summary?: string }>> };
    expect(doc.paths['/v1/versions/{version_id}/segments/{segment_id}/redub']?.post?.summary).toMatch(/^Re-dub one line/);
    expect(doc.paths['/v1/versions/{version_id}/speakers/{speaker_id}/preview']?.post?.summary).toMatch(/voice choice/);
  });
});

describe('re-dub with a blob store the API cannot reopen in a thread', () => {
  it('answers 501 saying why (no synthesis on the event loop instead)', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-api-redub-'));
    const inner = new FsBlobStore(path.join(dataDir, 'blobs'));
    // the same store behind an object that is not an FsBlobStore (as a NATS object store is not)
    const store = new Proxy({}, { get: (_t, k) => { const v = (inner as unknown as Record<string | symbol, unknown>)[k]; return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(inner) : v; } }) as BlobStore;
    const t = await startTestApi('pglite', { store }, { dataDir });
    try {
      const r = await t.api.app.inject({ method: 'POST', url: '/v1/assets/', headers: t.auth1, payload: createBody() });
      const assetId = r.json().asset_id as string;
      const versionId = r.json().languages[0].versions[0].version_id as string;
      await prepareAsset(t, assetId);
      const res = await t.api.app.inject({ method: 'POST', url: `/v1/versions/${versionId}/segments/s1/redub`, headers: { ...t.auth1, 'content-type': 'application/json' }, payload: '{}' });
      expect(res.statusCode).toBe(501);
      expect(res.json().detail).toMatch(/blob store on a filesystem path/);
      const p = await t.api.app.inject({ method: 'POST', url: `/v1/versions/${versionId}/speakers/S1/preview`, headers: { ...t.auth1, 'content-type': 'application/json' }, payload: '{}' });
      expect(p.statusCode).toBe(501);
    } finally {
      await t.close();
    }
  });
});
