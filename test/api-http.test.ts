/**
 * Real HTTP: streaming multipart upload with size limits; plus rate limiting, health, metrics,
 * OpenAPI, docs, voices and their preview.
 */
import fs from 'node:fs';
import path from 'node:path';
import { blobKeys } from '@dub/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBody, finishGeneration, prepareAsset, startTestApi, type TestApi } from './api-helpers.js';

const request = { name: 'Upload', locale: 'en-US', languages: [{ locale: 'fr-FR' }] };

function form(parts: { name: string; value: string | Blob; filename?: string }[]): FormData {
  const f = new FormData();
  for (const p of parts) {
    if (typeof p.value === 'string') f.append(p.name, p.value);
    else f.append(p.name, p.value, p.filename ?? p.name);
  }
  return f;
}

describe('upload over real HTTP', () => {
  let t: TestApi;
  let base: string;
  beforeAll(async () => {
    t = await startTestApi('pglite', { maxMediaBytes: 3_000_000, orgLimits: { org2: { maxMediaBytes: 50_000_000 } } });
    base = await t.api.listen(0);
  });
  afterAll(async () => t?.close());

  const upload = (f: FormData, key = 'key-one') => fetch(`${base}/v1/assets/upload`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: f });

  it('streams the video and background into the blob store and enqueues prepare-asset with blob refs', async () => {
    const video = new Uint8Array(1_500_000).map((_, i) => i % 251);
    const r = await upload(form([{ name: 'request', value: JSON.stringify(request) }, { name: 'video', value: new Blob([video], { type: 'video/mp4' }), filename: 'in.mp4' }, { name: 'background', value: new Blob([new Uint8Array(1000)]), filename: 'bg.wav' }]));
    expect(r.status).toBe(201);
    const a = await r.json();
    expect(a).toMatchObject({ name: 'Upload', locale: 'en-US', status: 'Dubbing' });
    const stored = await t.api.store.getBuffer(blobKeys.sourceUpload(a.asset_id));
    expect(stored.equals(Buffer.from(video))).toBe(true);
    expect((await t.api.store.stat(blobKeys.backgroundUpload(a.asset_id)))?.size).toBe(1000);
    const job = t.transport.jobsOf('prepare-asset').find((j) => j.asset_id === a.asset_id)!;
    expect(job.media).toEqual({ blob: blobKeys.sourceUpload(a.asset_id) });
    expect(job.background).toEqual({ blob: blobKeys.backgroundUpload(a.asset_id) });
  });

  it('accepts the request part sent as a JSON file part', async () => {
    const r = await upload(form([{ name: 'video', value: new Blob([new Uint8Array(100)]) }, { name: 'request', value: new Blob([JSON.stringify(request)], { type: 'application/json' }), filename: 'request.json' }]));
    expect(r.status).toBe(201);
  });

  it('accepts the request part sent as a field with Content-Type application/json (curl -F "request=...;type=application/json")', async () => {
    const boundary = 'dubtestboundary';
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="request"\r\nContent-Type: application/json\r\n\r\n${JSON.stringify(request)}\r\n`),
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="video"; filename="in.mp4"\r\nContent-Type: video/mp4\r\n\r\n`),
      Buffer.alloc(100, 1),
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const r = await fetch(`${base}/v1/assets/upload`, { method: 'POST', headers: { authorization: 'Bearer key-one', 'content-type': `multipart/form-data; boundary=${boundary}` }, body });
    expect(r.status).toBe(201);
    expect((await r.json()).name).toBe(request.name);
  });

  it('400 for a missing video or request, a non-JSON request and request validation errors; nothing is left behind', async () => {
    const blobsBefore = (await t.api.store.list('assets/')).length;
    let r = await upload(form([{ name: 'request', value: JSON.stringify(request) }]));
    expect(r.status).toBe(400);
    expect((await r.json()).detail).toMatch(/^video: the file part "video" is required/);
    r = await upload(form([{ name: 'video', value: new Blob([new Uint8Array(10)]) }]));
    expect((await r.json()).detail).toMatch(/^request: the JSON part "request" is required/);
    r = await upload(form([{ name: 'request', value: '{not json' }, { name: 'video', value: new Blob([new Uint8Array(10)]) }]));
    expect((await r.json()).detail).toMatch(/^request: must be JSON/);
    r = await upload(form([{ name: 'request', value: JSON.stringify({ ...request, locale: 'th-TH' }) }, { name: 'video', value: new Blob([new Uint8Array(10)]) }]));
    expect(r.status).toBe(400);
    expect((await r.json()).detail).toMatch(/^locale: unsupported source locale/);
    r = await upload(form([{ name: 'request', value: JSON.stringify({ ...request, voice_over: true }) }, { name: 'video', value: new Blob([new Uint8Array(10)]) }]));
    expect((await r.json()).detail).toMatch(/voice_over_library_required/);
    r = await fetch(`${base}/v1/assets/upload`, { method: 'POST', headers: { authorization: 'Bearer key-one', 'content-type': 'application/json' }, body: JSON.stringify(request) });
    expect(r.status).toBe(400);
    expect((await t.api.store.list('assets/')).length).toBe(blobsBefore);
  });

  it('cuts off a video past the account limit mid-stream and deletes the partial blob', async () => {
    const before = await t.api.store.list('assets/');
    const big = new Uint8Array(4_000_000);
    const r = await upload(form([{ name: 'request', value: JSON.stringify(request) }, { name: 'video', value: new Blob([big]) }])).catch((e) => e as Error);
    expect(r).toBeInstanceOf(Response);
    expect((r as Response).status).toBe(403);
    expect(((await (r as Response).json()) as { detail: string }).detail).toMatch(/video_size_limit_reached/);
    expect(await t.api.store.list('assets/')).toEqual(before);
    // no temp file remains either
    const files = fs.readdirSync(path.join(t.dataDir, 'blobs'), { recursive: true }).map(String);
    expect(files.filter((f) => f.includes('.tmp-'))).toEqual([]);
    // org2 has a higher limit
    const ok = await upload(form([{ name: 'request', value: JSON.stringify(request) }, { name: 'video', value: new Blob([big]) }]), 'key-two');
    expect(ok.status).toBe(201);
  });

  it('requires authentication', async () => {
    const r = await fetch(`${base}/v1/assets/upload`, { method: 'POST', body: form([{ name: 'request', value: '{}' }]) });
    expect(r.status).toBe(401);
  });

  it('serves a signed result with byte ranges over HTTP (200, 206, 416)', async () => {
    const a = (await t.api.app.inject({ method: 'POST', url: '/v1/assets/', headers: t.auth1, payload: createBody() })).json();
    const vid = a.languages[0].versions[0].version_id;
    await prepareAsset(t, a.asset_id);
    await t.api.app.inject({ method: 'POST', url: `/v1/versions/${vid}/generate`, headers: t.auth1, payload: { generate_mode: 'no_lips' } });
    const video = Buffer.alloc(300_000, 7);
    video.write('HEAD', 0);
    video.write('TAIL', video.length - 4);
    await finishGeneration(t, a.asset_id, vid, 1, video);
    const v = await (await fetch(`${base}/v1/versions/${vid}`, { headers: t.auth1 })).json();
    expect(v.result_url.startsWith(base)).toBe(true);
    const full = await fetch(v.result_url);
    expect(full.status).toBe(200);
    expect(full.headers.get('content-length')).toBe('300000');
    expect(Buffer.from(await full.arrayBuffer()).equals(video)).toBe(true);
    const head = await fetch(v.result_url, { headers: { range: 'bytes=0-3' } });
    expect(head.status).toBe(206);
    expect(head.headers.get('content-range')).toBe('bytes 0-3/300000');
    expect(await head.text()).toBe('HEAD');
    const tail = await fetch(v.result_url, { headers: { range: 'bytes=299996-' } });
    expect(await tail.text()).toBe('TAIL');
    const none = await fetch(v.result_url, { headers: { range: 'bytes=300000-' } });
    expect(none.status).toBe(416);
    expect(none.headers.get('content-range')).toBe('bytes */300000');
    const audio = await fetch(v.result_audio_url);
    expect(await audio.text()).toBe('audio-bytes');
  });

  it('answers health over HTTP', async () => {
    const r = await fetch(`${base}/healthz`);
    expect(await r.json()).toEqual({ status: 'ok', database: 'pglite' });
  });
});

describe('service endpoints', () => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi('pglite', { rateLimitPerMin: 5, keys: [{ key: 'key-one', org: 'org1' }, { key: 'key-two', org: 'org2' }, { key: 'key-three', org: 'org1' }] });
  });
  afterAll(async () => t?.close());

  it('rate limits per key with 429 and Retry-After', async () => {
    const codes: number[] = [];
    let retry: string | undefined;
    for (let i = 0; i < 7; i++) {
      const r = await t.api.app.inject({ method: 'GET', url: '/v1/assets/', headers: t.auth1 });
      codes.push(r.statusCode);
      if (r.statusCode === 429) retry = r.headers['retry-after'] as string;
    }
    // a minute boundary may fall inside the loop: at least 5 allowed, and past the limit 429
    expect(codes.filter((c) => c === 200).length).toBeGreaterThanOrEqual(5);
    if (codes.includes(429)) {
      expect(Number(retry)).toBeGreaterThan(0);
      expect(Number(retry)).toBeLessThanOrEqual(60);
    }
    // another key has its own window
    expect((await t.api.app.inject({ method: 'GET', url: '/v1/assets/', headers: t.auth2 })).statusCode).toBe(200);
  });

  it('publishes OpenAPI, a docs page, health and Prometheus metrics without auth', async () => {
    const o = (await t.api.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(o.openapi).toBe('3.0.3');
    for (const p of ['/v1/assets/', '/v1/assets/upload', '/v1/assets/{asset_id}', '/v1/assets/{asset_id}/languages', '/v1/versions/{version_id}', '/v1/versions/{version_id}/revise', '/v1/versions/{version_id}/generate', '/v1/versions/{version_id}/studio_url', '/v1/versions/{version_id}/srt', '/v1/voices', '/v1/dubbings/{dubbing_id}/versions', '/v1/callbacks/public-key']) {
      expect(Object.keys(o.paths), p).toContain(p);
    }
    expect(o.paths['/v1/assets/'].post.requestBody.content['application/json'].schema).toBeDefined();
    const docs = await t.api.app.inject({ method: 'GET', url: '/docs' });
    expect(docs.statusCode).toBe(200);
    expect(docs.body).toContain('/v1/versions/{version_id}/generate');
    expect(docs.body).not.toMatch(/<script/);
    const m = await t.api.app.inject({ method: 'GET', url: '/metrics' });
    expect(m.headers['content-type']).toMatch(/^text\/plain; version=0.0.4/);
    expect(m.body).toMatch(/# TYPE dub_http_requests_total counter/);
    expect(m.body).toMatch(/dub_http_request_duration_seconds_bucket\{method="GET",route="\/openapi.json",le="\+Inf"\} 1/);
    expect(m.body).toMatch(/dub_outbox_pending 0/);
  });

  it('lists library voices and renders a preview WAV with espeak-ng (cached)', async () => {
    const auth = { authorization: 'Bearer key-three' };
    const r = await t.api.app.inject({ method: 'GET', url: '/v1/voices', headers: auth });
    expect(r.statusCode).toBe(200);
    const voices = r.json().voices;
    expect(voices.length).toBeGreaterThanOrEqual(4);
    expect(voices[0]).toMatchObject({ voice_id: 'ana', gender: 'female', languages: expect.arrayContaining(['en-US', 'es-ES', 'th-TH']) });
    const url = new URL(voices[0].preview_url);
    const p = await t.api.app.inject({ method: 'GET', url: `${url.pathname}?locale=es-ES`, headers: auth });
    expect(p.statusCode).toBe(200);
    expect(p.headers['content-type']).toBe('audio/wav');
    expect(p.rawPayload.subarray(0, 4).toString()).toBe('RIFF');
    expect(p.rawPayload.length).toBeGreaterThan(20_000);
    expect(await t.api.store.has('voices/ana/preview-es-ES.wav')).toBe(true);
    expect((await t.api.app.inject({ method: 'GET', url: '/v1/voices/nobody/preview', headers: auth })).statusCode).toBe(404);
    expect((await t.api.app.inject({ method: 'GET', url: `${url.pathname}?locale=he-IL`, headers: auth })).statusCode).toBe(400);
  });
});
