/**
 * The studio routes of the API without a browser: the two page kinds and their boot data, refused
 * and expired links, the context call, the hashed assets, and what a link's credential may do
 * (its own version: read, edit, generate, revise; nothing else), and the waveform of the source.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { blobKeys } from '@dub/core';
import type { StudioBoot } from '@dub/studio';
import { UrlSigner } from '@dub/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBody, prepareAsset, startTestApi, tmpDir, type TestApi } from './api-helpers.js';

const SECRET = 'studio-routes-test-secret';

function bootOf(html: string): StudioBoot {
  const m = /<script type="application\/json" id="dub-studio-boot">([^<]*)<\/script>/.exec(html);
  if (!m) throw new Error('no boot data in the page');
  return JSON.parse(m[1]!) as StudioBoot;
}

describe('studio routes', () => {
  let t: TestApi;
  let assetId: string;
  let versionId: string;
  let otherVersionId: string;
  let token: string;

  const get = (url: string, headers: Record<string, string> = {}) => t.api.app.inject({ method: 'GET', url, headers });

  beforeAll(async () => {
    t = await startTestApi('pglite', { urlSecret: SECRET });
    const mk = async () => {
      const r = await t.api.app.inject({ method: 'POST', url: '/v1/assets/', headers: t.auth1, payload: createBody() });
      return { assetId: r.json().asset_id as string, versionId: r.json().languages[0].versions[0].version_id as string };
    };
    ({ assetId, versionId } = await mk());
    await prepareAsset(t, assetId, { duration: 42 });
    const other = await mk();
    otherVersionId = other.versionId;
    await prepareAsset(t, other.assetId);
    const r = await t.api.app.inject({ method: 'POST', url: `/v1/versions/${versionId}/studio_url`, headers: t.auth1, payload: { expiration_minutes: 60 } });
    token = new URL(r.json().studio_url).search;
  });
  afterAll(async () => t?.close());

  it('signed page: 200, no-store, CSP, boot data with the context and the script with its ETag', async () => {
    const r = await get(`/studio/${versionId}${token}`);
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(r.headers['cache-control']).toBe('no-store');
    expect(r.headers['x-frame-options']).toBe('DENY');
    expect(r.headers['content-security-policy']).toMatch(/default-src 'none'; script-src 'self' http:\/\/localhost;/);
    const boot = bootOf(r.body);
    expect(boot).toMatchObject({ v: 1, access: 'link', version_id: versionId, api_base: 'http://localhost:80' });
    expect(boot.context).toMatchObject({ access: 'link', has_script: true, version: { version_id: versionId, status: 'ReadyToEdit' }, asset: { asset_id: assetId, name: 'Interview', locale: 'en-US', duration: 42 } });
    const expires = Number(new URLSearchParams(token).get('expires'));
    expect(boot.context!.link_expires_at).toBe(new Date(expires * 1000).toISOString());
    expect(boot.context!.asset.source_video_url).toMatch(new RegExp(`/v1/media/${assetId}/source\\?expires=\\d+&sig=`));
    const script = await get(`/v1/versions/${versionId}/script${token}`);
    expect(boot.script).toEqual({ script: script.json(), etag: script.headers.etag });
    expect(r.body).toContain(`<title>es-ES v1 - Interview - Studio</title>`);
    // the boot data are no more than what the link may see: nothing of the other version
    expect(r.body).not.toContain(otherVersionId);
  });

  it('a tampered or expired link gets a 403 page that says why, with no data', async () => {
    const bad = new URLSearchParams(token);
    bad.set('sig', `${bad.get('sig')!.slice(0, -2)}xx`);
    let r = await get(`/studio/${versionId}?${bad}`);
    expect(r.statusCode).toBe(403);
    expect(bootOf(r.body)).toEqual({ v: 1, api_base: 'http://localhost:80', version_id: versionId, access: 'link', error: { status: 403, detail: 'the studio link signature is invalid. Ask the owner of the version for a new studio link.' } });
    expect(r.body).toContain('<p id="boot-message">the studio link signature is invalid.');
    const past = Math.floor(Date.now() / 1000) - 60;
    const sig = new UrlSigner(Buffer.from(SECRET)).sign({ purpose: 'studio', versionId, generation: 0, expires: past });
    r = await get(`/studio/${versionId}?expires=${past}&sig=${sig}`);
    expect(r.statusCode).toBe(403);
    expect(bootOf(r.body).error?.detail).toMatch(/^the studio link has expired/);
    expect(bootOf(r.body).context).toBeUndefined();
    // the same expired credential on an API call
    expect((await get(`/v1/versions/${versionId}/studio/context?expires=${past}&sig=${sig}`)).statusCode).toBe(403);
  });

  it('plain studio_url: 401 shell asking for the key without one; 200 with boot data with it; another organization gets 404', async () => {
    let r = await get(`/v1/versions/${versionId}/studio`);
    expect(r.statusCode).toBe(401);
    expect(r.headers['www-authenticate']).toBe('Bearer');
    expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(bootOf(r.body)).toEqual({ v: 1, api_base: 'http://localhost:80', version_id: versionId, access: 'key' });
    r = await get(`/v1/versions/${versionId}/studio`, t.auth1);
    expect(r.statusCode).toBe(200);
    expect(bootOf(r.body).context).toMatchObject({ access: 'key', link_expires_at: null, version: { version_id: versionId } });
    r = await get(`/v1/versions/${versionId}/studio`, t.auth2);
    expect(r.statusCode).toBe(404);
    expect(bootOf(r.body).error).toEqual({ status: 404, detail: `version ${versionId} not found` });
    // a /studio/{id} URL without a signature behaves like the plain one
    expect((await get(`/studio/${versionId}`)).statusCode).toBe(401);
  });

  it('context call: with the key or the link of that version only', async () => {
    const byKey = await get(`/v1/versions/${versionId}/studio/context`, t.auth1);
    expect(byKey.statusCode).toBe(200);
    expect(Object.keys(byKey.json()).sort()).toEqual(['access', 'asset', 'has_script', 'link_expires_at', 'version']);
    expect(Object.keys(byKey.json().asset).sort()).toEqual(['asset_id', 'duration', 'locale', 'name', 'source_video_url', 'thumbnail_url']);
    expect((await get(`/v1/versions/${versionId}/studio/context`)).statusCode).toBe(401);
    expect((await get(`/v1/versions/${versionId}/studio/context`, t.auth2)).statusCode).toBe(404);
    expect((await get(`/v1/versions/${versionId}/studio/context${token}`)).json().access).toBe('link');
    expect((await get(`/v1/versions/${otherVersionId}/studio/context${token}`)).statusCode).toBe(403);
  });

  it("a link's credential may read, edit, generate and revise its own version, and nothing else", async () => {
    const inj = (method: 'GET' | 'POST' | 'PATCH' | 'PUT', url: string, payload?: object, headers: Record<string, string> = {}) =>
      t.api.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
    expect((await inj('GET', `/v1/versions/${versionId}${token}`)).json().status).toBe('ReadyToEdit');
    const s = await inj('GET', `/v1/versions/${versionId}/script${token}`);
    const edited = { ...s.json(), segments: s.json().segments.map((x: { target_text: string }, i: number) => (i === 0 ? { ...x, target_text: 'Hola.' } : x)) };
    const put = await inj('PUT', `/v1/versions/${versionId}/script${token}`, edited, { 'if-match': s.headers.etag as string });
    expect(put.statusCode).toBe(200);
    expect((await inj('PUT', `/v1/versions/${versionId}/script${token}`, edited, { 'if-match': s.headers.etag as string })).statusCode).toBe(412);
    const gen = await inj('POST', `/v1/versions/${versionId}/generate${token}`, { generate_mode: 'no_lips' });
    expect(gen.statusCode).toBe(202);
    expect(gen.json().status).toBe('Generating');
    expect(t.transport.jobsOf('generate-version').at(-1)).toMatchObject({ version_id: versionId, org_id: 'org1' });
    expect((await inj('POST', `/v1/versions/${versionId}/generate${token}`, { generate_mode: 'no_lips' })).statusCode).toBe(400);
    // revise, but no new studio links from a link
    const rev = await inj('PATCH', `/v1/versions/${versionId}/revise${token}`, { studio_url_request: { expiration_minutes: 43200 } });
    expect(rev.statusCode).toBe(403);
    expect(rev.json().detail).toMatch(/a studio link cannot create studio links/);
    await t.transport.publish({ type: 'version_generate_failed', job_id: 'j', asset_id: assetId, version_id: versionId, generation: t.transport.jobsOf('generate-version').at(-1)!.generation, error: { error_code: 'general_error', detail: 'boom' } } as never);
    expect((await inj('GET', `/v1/versions/${versionId}${token}`)).json().status).toBe('Failed');
    expect((await inj('PATCH', `/v1/versions/${versionId}/revise${token}`, {})).statusCode).toBe(200);
    expect((await inj('GET', `/v1/versions/${versionId}${token}`)).json().status).toBe('ReadyToEdit');
    // outside the version
    expect((await inj('GET', `/v1/versions/${otherVersionId}${token}`)).statusCode).toBe(403);
    expect((await inj('PATCH', `/v1/versions/${otherVersionId}/revise${token}`, {})).statusCode).toBe(403);
    expect((await inj('GET', `/v1/assets/${assetId}${token}`)).statusCode).toBe(401);
    expect((await inj('GET', `/v1/assets/${token}`)).statusCode).toBe(401);
    expect((await inj('POST', `/v1/versions/${versionId}/studio_url${token}`, {})).statusCode).toBe(401);
    expect((await inj('POST', `/v1/assets/${assetId}/languages${token}`, { languages: [{ locale: 'fr-FR' }] })).statusCode).toBe(401);
    expect((await inj('GET', `/v1/voices${token}`)).statusCode).toBe(401);
  });

  it('assets: under the build hash, immutable, with ETag and 304; anything else 404', async () => {
    const page = await get(`/studio/${versionId}${token}`);
    const src = /src="http:\/\/localhost:80(\/studio-assets\/[0-9a-f]{12}\/)main\.js"/.exec(page.body);
    expect(src).not.toBeNull();
    const dir = src![1]!;
    const js = await get(`${dir}main.js`);
    expect(js.statusCode).toBe(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(js.body).toMatch(/import \{ StudioApp \} from '\.\/app\.js'/);
    expect((await get(`${dir}app.js`)).statusCode).toBe(200);
    expect((await get(`${dir}main.js`, { 'if-none-match': js.headers.etag as string })).statusCode).toBe(304);
    const css = await get(`${dir}studio.css`);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    for (const bad of [`${dir}index.html`, `${dir}main.js.map`, `${dir}index.d.ts`, `${dir}.tsbuildinfo`, '/studio-assets/000000000000/main.js', `${dir}..%2F..%2Fpackage.json`]) {
      const r = await get(bad);
      expect(r.statusCode, bad).toBe(404);
      expect(r.headers['cache-control'], bad).toBe('no-store');
    }
  });

  it('waveform: computed once from the source audio, stored per asset, with the key or the link of that version', async () => {
    const r0 = await t.api.app.inject({ method: 'POST', url: '/v1/assets/', headers: t.auth1, payload: createBody({ name: 'Waveform' }) });
    const aid = r0.json().asset_id as string;
    const vid = r0.json().languages[0].versions[0].version_id as string;
    // not prepared yet: no source to measure
    const early = await get(`/v1/versions/${vid}/waveform`, t.auth1);
    expect(early.statusCode).toBe(400);
    expect(early.json().detail).toMatch(new RegExp(`the source video of asset ${aid} is not ready yet`));
    // a real video: 1 s of tone at -6 dBFS, then 1 s of silence
    const dir = tmpDir('dub-waveform-route-');
    const file = path.join(dir, 'source.mp4');
    execFileSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=size=64x48:rate=10:duration=2', '-f', 'lavfi', '-i', 'sine=frequency=500:sample_rate=48000:duration=1', '-filter_complex', '[1:a]apad=whole_dur=2[a]', '-map', '0:v', '-map', '[a]', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-t', '2', file]);
    await t.api.store.put(blobKeys.sourceVideo(aid), fs.readFileSync(file));
    fs.rmSync(dir, { recursive: true, force: true });
    await t.transport.publish({ type: 'asset_prepared', job_id: `job_prep_${aid}`, asset_id: aid, duration: 2, source_video_key: blobKeys.sourceVideo(aid), transcript_key: blobKeys.transcript(aid) });

    const r = await get(`/v1/versions/${vid}/waveform`, t.auth1);
    expect(r.statusCode, r.body).toBe(200);
    expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(r.headers['cache-control']).toBe('private, max-age=86400');
    const w = r.json();
    expect(Object.keys(w).sort()).toEqual(['asset_id', 'count', 'duration', 'encoding', 'floor_db', 'peak', 'rate', 'rms']);
    expect(w).toMatchObject({ asset_id: aid, rate: 50, encoding: 'u8-db', floor_db: -90 });
    expect(w.duration).toBeGreaterThan(1.95);
    expect(w.duration).toBeLessThan(2.1);
    const peak = Buffer.from(w.peak, 'base64');
    const rms = Buffer.from(w.rms, 'base64');
    expect(peak.length).toBe(w.count);
    expect(rms.length).toBe(w.count);
    expect(w.count).toBe(Math.ceil(w.duration * 50 - 1e-9));
    const db = (b: number) => w.floor_db * (1 - b / 255);
    // the tone (lavfi's sine has amplitude 1/8: -18.1 dBFS peak, RMS 3 dB lower; AAC-coded) then silence
    for (let i = 5; i < 45; i++) expect(Math.abs(db(peak[i]!) + 18.06)).toBeLessThan(1);
    for (let i = 5; i < 45; i++) expect(Math.abs(db(rms[i]!) + 21.07)).toBeLessThan(1);
    for (let i = 55; i < 95; i++) expect(db(rms[i]!)).toBeLessThan(-60);
    expect(await t.api.store.has(`assets/${aid}/waveform-v1-50.json`)).toBe(true);

    // conditional request, the signed link of that version, and nobody else
    expect((await get(`/v1/versions/${vid}/waveform`, { ...t.auth1, 'if-none-match': r.headers.etag as string })).statusCode).toBe(304);
    const link = await t.api.app.inject({ method: 'POST', url: `/v1/versions/${vid}/studio_url`, headers: t.auth1, payload: {} });
    const vtoken = new URL(link.json().studio_url).search;
    expect((await get(`/v1/versions/${vid}/waveform${vtoken}`)).body).toBe(r.body);
    expect((await get(`/v1/versions/${vid}/waveform${token}`)).statusCode).toBe(403);
    expect((await get(`/v1/versions/${vid}/waveform`)).statusCode).toBe(401);
    expect((await get(`/v1/versions/${vid}/waveform`, t.auth2)).statusCode).toBe(404);
    // computed once: later requests read the stored body, even without the source
    await t.api.store.delete(blobKeys.sourceVideo(aid));
    expect((await get(`/v1/versions/${vid}/waveform`, t.auth1)).body).toBe(r.body);
  });
});
