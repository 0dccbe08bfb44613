/**
 * Versions: every transition allowed and refused (state changes only from worker events or the
 * API's own triggers), generate (balance, voice-over, concurrency), revise, signed results with
 * ranges, studio links, SRT, script editing with If-Match, further versions.
 */
import { blobKeys } from '@dub/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBody, dbKinds, finishGeneration, postgresAvailable, prepareAsset, sampleScript, startTestApi, type TestApi } from './api-helpers.js';

for (const kind of dbKinds()) {
  describe(`versions (${kind})`, async () => {
    if (kind === 'postgres' && !(await postgresAvailable())) {
      it.skip('PostgreSQL at 127.0.0.1:5432 is unreachable: PostgreSQL variant skipped', () => undefined);
      return;
    }
    let t: TestApi;
    beforeAll(async () => {
      t = await startTestApi(kind, { orgBalances: { org2: 3 } });
    });
    afterAll(async () => t?.close());

    const inject = (method: 'GET' | 'POST' | 'PATCH' | 'PUT', url: string, payload?: unknown, headers: Record<string, string> = t.auth1) =>
      t.api.app.inject({ method, url, headers, ...(payload !== undefined ? { payload: payload as object } : {}) });
    const newAsset = async (over: Record<string, unknown> = {}, headers = t.auth1) => {
      const r = await inject('POST', '/v1/assets/', createBody(over), headers);
      expect(r.statusCode).toBe(201);
      const a = r.json();
      return { assetId: a.asset_id as string, versionId: a.languages[0].versions[0].version_id as string, dubbingId: a.languages[0].dubbing_id as string };
    };
    const version = async (id: string, headers = t.auth1) => (await inject('GET', `/v1/versions/${id}`, undefined, headers)).json();
    const asset = async (id: string, headers = t.auth1) => (await inject('GET', `/v1/assets/${id}`, undefined, headers)).json();

    it('NotReady -> ReadyToEdit on version_prepared; asset Dubbing -> Ready', async () => {
      const { assetId, versionId } = await newAsset();
      const v = await version(versionId);
      expect(v).toMatchObject({ asset_id: assetId, version_id: versionId, status: 'NotReady', locale: 'es-ES', name: 'es-ES v1', voice_over: false });
      expect(v.studio_url).toMatch(new RegExp(`/v1/versions/${versionId}/studio$`));
      expect(v.result_url).toBeUndefined();
      expect((await asset(assetId)).status).toBe('Dubbing');
      await prepareAsset(t, assetId, { duration: 42 });
      expect((await version(versionId)).status).toBe('ReadyToEdit');
      const a = await asset(assetId);
      expect(a).toMatchObject({ status: 'Ready', duration: 42 });
      expect(a.source_video_url).toMatch(/\/v1\/media\/ast_[a-z2-7]+\/source\?expires=\d+&sig=/);
      const src = await t.api.app.inject({ method: 'GET', url: new URL(a.source_video_url).pathname + new URL(a.source_video_url).search });
      expect(src.statusCode).toBe(200);
      expect(src.body).toBe('source video bytes');
      // a repeated (at-least-once) event changes nothing
      await t.transport.publish({ type: 'version_prepared', job_id: 'j', asset_id: assetId, version_id: versionId, script_key: blobKeys.script(versionId) });
      expect((await version(versionId)).status).toBe('ReadyToEdit');
    });

    it('version_failed: NotReady -> Failed (asset PendingReview); revise re-runs preparation (Failed -> NotReady)', async () => {
      const { assetId, versionId } = await newAsset();
      await t.transport.publish({ type: 'version_failed', job_id: 'j', asset_id: assetId, version_id: versionId, error: { error_code: 'general_error', detail: 'translation failed' } });
      const v = await version(versionId);
      expect(v).toMatchObject({ status: 'Failed', error: { error_code: 'general_error', detail: 'translation failed' } });
      expect((await asset(assetId)).status).toBe('PendingReview');
      const before = t.transport.jobsOf('prepare-version').length;
      const r = await inject('PATCH', `/v1/versions/${versionId}/revise`, {});
      expect(r.statusCode).toBe(200);
      expect(r.json()).toEqual({});
      expect((await version(versionId)).status).toBe('NotReady');
      const jobs = t.transport.jobsOf('prepare-version');
      expect(jobs.length).toBe(before + 1);
      expect(jobs.at(-1)).toMatchObject({ asset_id: assetId, source_locale: 'en-US', version: { version_id: versionId, locale: 'es-ES' } });
      // NotReady cannot be revised or generated
      const rr = await inject('PATCH', `/v1/versions/${versionId}/revise`, {});
      expect(rr.statusCode).toBe(400);
      expect(rr.json().detail).toMatch(/is NotReady; revise is allowed only when it is Completed, ReadyToEdit or Failed/);
      const g = await inject('POST', `/v1/versions/${versionId}/generate`, { generate_mode: 'no_lips' });
      expect(g.statusCode).toBe(400);
      expect(g.json().detail).toMatch(/is NotReady; generate is allowed only when it is ReadyToEdit/);
    });

    it('asset_failed: asset Failed with error; its versions fail too', async () => {
      const { assetId, versionId } = await newAsset();
      await t.transport.publish({ type: 'asset_failed', job_id: 'j', asset_id: assetId, error: { error_code: 'video_duration_limit_reached', detail: 'the video is 700 s long; the limit is 600 s' } });
      const a = await asset(assetId);
      expect(a).toMatchObject({ status: 'Failed', error: { error_code: 'video_duration_limit_reached', detail: 'the video is 700 s long; the limit is 600 s' } });
      expect((await version(versionId)).status).toBe('Failed');
      const r = await inject('POST', `/v1/assets/${assetId}/languages`, { languages: [{ locale: 'de-DE' }] });
      expect(r.statusCode).toBe(400);
      expect((await inject('PATCH', `/v1/versions/${versionId}/revise`, {})).statusCode).toBe(400);
    });

    it('generate: ReadyToEdit -> Generating (202, job with script_key and generation) -> Completed with signed results', async () => {
      const { assetId, versionId } = await newAsset({ voice_anonymization: 0.4, lips_model: 'real_face_turbo' });
      await prepareAsset(t, assetId);
      const r = await inject('POST', `/v1/versions/${versionId}/generate`, { generate_mode: 'with_lips' });
      expect(r.statusCode).toBe(202);
      expect(r.json()).toMatchObject({ version_id: versionId, status: 'Generating' });
      const job = t.transport.jobsOf('generate-version').find((j) => j.version_id === versionId)!;
      expect(job).toMatchObject({ mode: 'with_lips', script_key: blobKeys.script(versionId), generation: 1, locale: 'es-ES', options: { voice_over: false, voice_anonymization: 0.4, lips_model: 'real_face_turbo' } });
      // generating twice is refused, naming the status
      const again = await inject('POST', `/v1/versions/${versionId}/generate`, { generate_mode: 'no_lips' });
      expect(again.statusCode).toBe(400);
      expect(again.json().detail).toMatch(/is Generating/);
      // revise while Generating is refused
      expect((await inject('PATCH', `/v1/versions/${versionId}/revise`, {})).statusCode).toBe(400);
      // a stale generation's event is ignored
      await t.transport.publish({ type: 'version_generate_failed', job_id: 'j', asset_id: assetId, version_id: versionId, generation: 7, error: { error_code: 'general_error', detail: 'old' } });
      expect((await version(versionId)).status).toBe('Generating');
      await finishGeneration(t, assetId, versionId, 1, Buffer.from('0123456789abcdefghij'));
      const v = await version(versionId);
      expect(v.status).toBe('Completed');
      expect(v.result_generated_at).toMatch(/^\d{4}-\d\d-\d\dT/);
      // the engines that made the result, from the worker's event (a with_lips request that ran the classical engine says so)
      expect(v.engines).toEqual({ tts: { id: 'espeak-ng', label: 'espeak-ng', selected: 'auto' }, lips: { id: 'viseme-warp', label: 'viseme warp', selected: 'auto' } });
      expect(v.result_url).toMatch(new RegExp(`/v1/downloads/${versionId}/1/video\\?expires=\\d+&sig=`));
      expect(v.result_audio_url).toMatch(new RegExp(`/v1/downloads/${versionId}/1/audio\\?`));
      const exp = Number(new URL(v.result_url).searchParams.get('expires'));
      expect(exp - Date.now() / 1000).toBeGreaterThan(5 * 86400 - 60);
      expect(exp - Date.now() / 1000).toBeLessThanOrEqual(5 * 86400);
      const u = new URL(v.result_url);
      const full = await t.api.app.inject({ method: 'GET', url: u.pathname + u.search });
      expect(full.statusCode).toBe(200);
      expect(full.body).toBe('0123456789abcdefghij');
      expect(full.headers['accept-ranges']).toBe('bytes');
      const part = await t.api.app.inject({ method: 'GET', url: u.pathname + u.search, headers: { range: 'bytes=2-5' } });
      expect(part.statusCode).toBe(206);
      expect(part.body).toBe('2345');
      expect(part.headers['content-range']).toBe('bytes 2-5/20');
      const suffix = await t.api.app.inject({ method: 'GET', url: u.pathname + u.search, headers: { range: 'bytes=-3' } });
      expect(suffix.body).toBe('hij');
      const bad = await t.api.app.inject({ method: 'GET', url: u.pathname + u.search, headers: { range: 'bytes=50-60' } });
      expect(bad.statusCode).toBe(416);
      expect(bad.headers['content-range']).toBe('bytes */20');
      // tampered signature or expiry -> 403
      const tampered = new URL(v.result_url);
      tampered.searchParams.set('sig', tampered.searchParams.get('sig')!.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')));
      expect((await t.api.app.inject({ method: 'GET', url: tampered.pathname + tampered.search })).statusCode).toBe(403);
      const longer = new URL(v.result_url);
      longer.searchParams.set('expires', String(exp + 1000));
      expect((await t.api.app.inject({ method: 'GET', url: longer.pathname + longer.search })).statusCode).toBe(403);
      const otherGen = v.result_url.replace('/1/video', '/2/video');
      expect((await t.api.app.inject({ method: 'GET', url: new URL(otherGen).pathname + new URL(otherGen).search })).statusCode).toBe(403);
      // each GET gives fresh URLs
      // revise: Completed -> ReadyToEdit, results removed, old URLs 410
      const rev = await inject('PATCH', `/v1/versions/${versionId}/revise`, { studio_url_request: { expiration_minutes: 10 } });
      expect(rev.statusCode).toBe(200);
      expect(rev.json().studio_url).toMatch(new RegExp(`/studio/${versionId}\\?expires=\\d+&sig=`));
      const after = await version(versionId);
      expect(after.status).toBe('ReadyToEdit');
      expect(after.result_url).toBeUndefined();
      expect(await t.api.store.has(blobKeys.resultVideo(versionId, 1))).toBe(false);
      expect(await t.api.store.has(blobKeys.resultAudio(versionId, 1))).toBe(false);
      expect((await t.api.app.inject({ method: 'GET', url: u.pathname + u.search })).statusCode).toBe(410);
      // ReadyToEdit -> ReadyToEdit revise is allowed; then the next generate uses generation 2
      expect((await inject('PATCH', `/v1/versions/${versionId}/revise`)).statusCode).toBe(200);
      expect((await inject('POST', `/v1/versions/${versionId}/generate`, { generate_mode: 'no_lips' })).statusCode).toBe(202);
      expect(t.transport.jobsOf('generate-version').filter((j) => j.version_id === versionId).map((j) => j.generation)).toEqual([1, 2]);
      // Generating -> Failed on version_generate_failed, then revise -> ReadyToEdit (script kept)
      await t.transport.publish({ type: 'version_generate_failed', job_id: 'j', asset_id: assetId, version_id: versionId, generation: 2, error: { error_code: 'general_error', detail: 'mux failed' } });
      expect(await version(versionId)).toMatchObject({ status: 'Failed', error: { error_code: 'general_error', detail: 'mux failed' } });
      expect((await inject('PATCH', `/v1/versions/${versionId}/revise`, {})).statusCode).toBe(200);
      expect((await version(versionId)).status).toBe('ReadyToEdit');
    });

    it('generate validation: generate_mode required and enumerated; with_lips refused for voice-over versions', async () => {
      const { assetId, versionId } = await newAsset({ voice_over: true, voice_library_id: 'david' });
      await prepareAsset(t, assetId);
      let r = await inject('POST', `/v1/versions/${versionId}/generate`, {});
      expect(r.statusCode).toBe(400);
      expect(r.json().detail).toMatch(/generate_mode: is required/);
      r = await inject('POST', `/v1/versions/${versionId}/generate`, { generate_mode: 'fast' });
      expect(r.json().detail).toMatch(/generate_mode: must be one of with_lips, no_lips/);
      r = await inject('POST', `/v1/versions/${versionId}/generate`, { generate_mode: 'with_lips' });
      expect(r.statusCode).toBe(400);
      expect(r.json().detail).toMatch(/voice_over_with_lips_not_allowed/);
      r = await inject('POST', `/v1/versions/${versionId}/generate`, { generate_mode: 'no_lips' });
      expect(r.statusCode).toBe(202);
      const job = t.transport.jobsOf('generate-version').find((j) => j.version_id === versionId)!;
      expect(job.options).toMatchObject({ voice_over: true, voice_library_id: 'david' });
      expect((await inject('POST', `/v1/versions/${versionId}/generate`, { generate_mode: 'no_lips' }, t.auth2)).statusCode).toBe(404);
    });

    it('concurrent generate calls: exactly one wins', async () => {
      const { assetId, versionId } = await newAsset();
      await prepareAsset(t, assetId);
      const results = await Promise.all(Array.from({ length: 6 }, () => inject('POST', `/v1/versions/${versionId}/generate`, { generate_mode: 'no_lips' })));
      const codes = results.map((r) => r.statusCode).sort();
      expect(codes).toEqual([202, 400, 400, 400, 400, 400]);
      expect(t.transport.jobsOf('generate-version').filter((j) => j.version_id === versionId)).toHaveLength(1);
    });

    it('balance: a generate the balance cannot cover fails the version with insufficient_balance (403); failures refund', async () => {
      // org2 has 3 minutes; each asset lasts 2 minutes.
      const a1 = await newAsset({}, t.auth2);
      await prepareAsset(t, a1.assetId, { duration: 120 });
      expect((await inject('POST', `/v1/versions/${a1.versionId}/generate`, { generate_mode: 'no_lips' }, t.auth2)).statusCode).toBe(202);
      const a2 = await newAsset({}, t.auth2);
      await prepareAsset(t, a2.assetId, { duration: 120 });
      const r = await inject('POST', `/v1/versions/${a2.versionId}/generate`, { generate_mode: 'no_lips' }, t.auth2);
      expect(r.statusCode).toBe(403);
      expect(r.json().detail).toMatch(/^insufficient_balance: /);
      expect(await version(a2.versionId, t.auth2)).toMatchObject({ status: 'Failed', error: { error_code: 'insufficient_balance' } });
      expect(t.transport.jobsOf('generate-version').filter((j) => j.version_id === a2.versionId)).toHaveLength(0);
      // the first generation fails: its 2 minutes come back, so a2 (revised) can generate
      await t.transport.publish({ type: 'version_generate_failed', job_id: 'j', asset_id: a1.assetId, version_id: a1.versionId, generation: 1, error: { error_code: 'general_error', detail: 'x' } });
      expect((await inject('PATCH', `/v1/versions/${a2.versionId}/revise`, {}, t.auth2)).statusCode).toBe(200);
      expect((await inject('POST', `/v1/versions/${a2.versionId}/generate`, { generate_mode: 'no_lips' }, t.auth2)).statusCode).toBe(202);
      // auto_generate is refused at creation only when the balance is exhausted (<= 0): 1 minute is left
      expect((await inject('POST', '/v1/assets/', createBody({ auto_generate: 'no_lips' }), t.auth2)).statusCode).toBe(201);
    });

    it('auto_generate starts generation when preparation finishes', async () => {
      const { assetId, versionId } = await newAsset({ auto_generate: 'with_lips' });
      await prepareAsset(t, assetId);
      expect((await version(versionId)).status).toBe('Generating');
      expect(t.transport.jobsOf('generate-version').find((j) => j.version_id === versionId)).toMatchObject({ mode: 'with_lips', generation: 1 });
    });

    it('languages added before preparation are prepared after asset_prepared; after it at once', async () => {
      const { assetId } = await newAsset();
      const r = await inject('POST', `/v1/assets/${assetId}/languages`, { languages: [{ locale: 'it-IT' }] });
      const itVersion = r.json().languages[1].versions[0].version_id;
      expect(t.transport.jobsOf('prepare-version').some((j) => j.version.version_id === itVersion)).toBe(false);
      await prepareAsset(t, assetId);
      expect(t.transport.jobsOf('prepare-version').some((j) => j.version.version_id === itVersion)).toBe(true);
      const r2 = await inject('POST', `/v1/assets/${assetId}/languages`, { languages: [{ locale: 'pt-BR' }] });
      expect(r2.statusCode).toBe(202);
      const ptVersion = r2.json().languages[2].versions[0].version_id;
      expect(t.transport.jobsOf('prepare-version').find((j) => j.version.version_id === ptVersion)).toMatchObject({ source_locale: 'en-US', version: { locale: 'pt-BR' } });
    });

    it('SRT of target and source with profiles; 400 for unknown values and before a script exists', async () => {
      const { assetId, versionId } = await newAsset();
      let r = await inject('GET', `/v1/versions/${versionId}/srt`);
      expect(r.statusCode).toBe(400);
      expect(r.json().detail).toMatch(/no translation yet \(status NotReady\)/);
      r = await inject('GET', `/v1/versions/${versionId}/srt?locality=source`);
      expect(r.statusCode).toBe(400);
      await prepareAsset(t, assetId);
      r = await inject('GET', `/v1/versions/${versionId}/srt`);
      expect(r.statusCode).toBe(200);
      expect(r.headers['content-type']).toMatch(/^application\/x-subrip/);
      expect(r.body).toMatch(/^1\r?\n00:00:00,500 --> /);
      expect(r.body).toContain('Hola y bienvenidos');
      r = await inject('GET', `/v1/versions/${versionId}/srt?locality=source&srt_profile=mobile`);
      expect(r.statusCode).toBe(200);
      expect(r.body).toContain('Hello and welcome');
      for (const line of r.body.split(/\r?\n/).filter((l) => /[a-z]/i.test(l))) expect(line.length).toBeLessThanOrEqual(22);
      for (const p of ['global_regular', 'global_mobile']) expect((await inject('GET', `/v1/versions/${versionId}/srt?srt_profile=${p}`)).statusCode).toBe(200);
      r = await inject('GET', `/v1/versions/${versionId}/srt?locality=elsewhere`);
      expect(r.statusCode).toBe(400);
      expect(r.json().detail).toMatch(/locality: must be one of source, target/);
      r = await inject('GET', `/v1/versions/${versionId}/srt?srt_profile=tiny`);
      expect(r.json().detail).toMatch(/srt_profile: must be one of regular, mobile, global_regular, global_mobile/);
      expect((await inject('GET', `/v1/versions/${versionId}/srt`, undefined, t.auth2)).statusCode).toBe(404);
    });

    it('studio links: signed (default 180 min), bounds, plain when sign_url=false; scoped to one version', async () => {
      const { assetId, versionId } = await newAsset();
      const other = await newAsset();
      await prepareAsset(t, assetId);
      let r = await inject('POST', `/v1/versions/${versionId}/studio_url`, {});
      expect(r.statusCode).toBe(200);
      const link = new URL(r.json().studio_url);
      expect(link.pathname).toBe(`/studio/${versionId}`);
      const exp = Number(link.searchParams.get('expires'));
      expect(Math.round((exp - Date.now() / 1000) / 60)).toBe(180);
      r = await inject('POST', `/v1/versions/${versionId}/studio_url`, { sign_url: false });
      expect(r.json().studio_url).toMatch(new RegExp(`/v1/versions/${versionId}/studio$`));
      for (const m of [0, 43201, 1.5]) {
        r = await inject('POST', `/v1/versions/${versionId}/studio_url`, { expiration_minutes: m });
        expect(r.statusCode, String(m)).toBe(400);
        expect(r.json().detail).toMatch(/expiration_minutes/);
      }
      expect((await inject('POST', `/v1/versions/${versionId}/studio_url`, { expiration_minutes: 43200 })).statusCode).toBe(200);
      expect((await inject('POST', `/v1/versions/${versionId}/studio_url`, {}, t.auth2)).statusCode).toBe(404);
      // the signed page needs no key and shows real data
      const page = await t.api.app.inject({ method: 'GET', url: link.pathname + link.search });
      expect(page.statusCode).toBe(200);
      expect(page.headers['content-type']).toMatch(/text\/html/);
      expect(page.body).toContain('Hola y bienvenidos al programa.');
      expect(page.body).toContain('ReadyToEdit');
      // the token reads the script and SRT of this version only
      const token = link.search;
      expect((await t.api.app.inject({ method: 'GET', url: `/v1/versions/${versionId}/script${token}` })).statusCode).toBe(200);
      expect((await t.api.app.inject({ method: 'GET', url: `/v1/versions/${versionId}/srt${token}` })).statusCode).toBe(200);
      expect((await t.api.app.inject({ method: 'GET', url: `/v1/versions/${other.versionId}/script${token}` })).statusCode).toBe(403);
      expect((await t.api.app.inject({ method: 'GET', url: `/studio/${other.versionId}${token}` })).statusCode).toBe(403);
      // tampered
      const bad = new URL(link);
      bad.searchParams.set('expires', String(exp + 60));
      expect((await t.api.app.inject({ method: 'GET', url: bad.pathname + bad.search })).statusCode).toBe(403);
      // the plain studio URL requires the key
      expect((await t.api.app.inject({ method: 'GET', url: `/v1/versions/${versionId}/studio` })).statusCode).toBe(401);
      expect((await inject('GET', `/v1/versions/${versionId}/studio`)).statusCode).toBe(200);
    });

    it('script: GET with ETag, PUT with If-Match (412 on mismatch), only in ReadyToEdit, validated', async () => {
      const { assetId, versionId } = await newAsset();
      expect((await inject('GET', `/v1/versions/${versionId}/script`)).statusCode).toBe(400);
      await prepareAsset(t, assetId);
      const g = await inject('GET', `/v1/versions/${versionId}/script`);
      expect(g.statusCode).toBe(200);
      const etag = g.headers.etag as string;
      expect(etag).toMatch(/^"ver_.*-r0"$/);
      const script = g.json();
      script.segments[0].target_text = 'Hola a todos.';
      const put = (body: unknown, ifMatch?: string) => t.api.app.inject({ method: 'PUT', url: `/v1/versions/${versionId}/script`, headers: { ...t.auth1, ...(ifMatch ? { 'if-match': ifMatch } : {}) }, payload: body as object });
      let r = await put(script, etag);
      expect(r.statusCode).toBe(200);
      const etag2 = r.headers.etag as string;
      expect(etag2).not.toBe(etag);
      expect(r.json().segments[0].target_text).toBe('Hola a todos.');
      r = await put(script, etag);
      expect(r.statusCode).toBe(412);
      expect(r.json().detail).toMatch(/changed since it was read/);
      r = await put({ ...script, segments: 'nope' }, etag2);
      expect(r.statusCode).toBe(400);
      r = await put({ ...script, version_id: 'ver_other' }, etag2);
      expect(r.statusCode).toBe(400);
      // a speaker's name and voice choice are saved with the script; a library voice must exist
      const speakers = script.speakers as { id: string }[];
      r = await put({ ...script, speakers: speakers.map((sp, i) => (i === 0 ? { ...sp, voice: { source: 'library', library_voice_id: 'nobody' } } : sp)) }, etag2);
      expect(r.statusCode).toBe(400);
      expect(r.json().detail).toMatch(/script\.speakers\[0\]\.voice\.library_voice_id: unknown voice "nobody"/);
      r = await put({ ...script, speakers: speakers.map((sp, i) => (i === 0 ? { ...sp, voice: { source: 'library' } } : sp)) }, etag2);
      expect(r.json().detail).toMatch(/needs library_voice_id/);
      r = await put({ ...script, speakers: speakers.map((sp, i) => (i === 0 ? { ...sp, voice: { source: 'anonymized', anonymization: 2 } } : sp)) }, etag2);
      expect(r.statusCode).toBe(400);
      r = await put({ ...script, speakers: speakers.map((sp, i) => (i === 0 ? { ...sp, name: 'Host', voice: { source: 'library', library_voice_id: 'lucia' } } : sp)) }, etag2);
      expect(r.statusCode).toBe(200);
      expect(r.json().speakers[0]).toMatchObject({ name: 'Host', voice: { source: 'library', library_voice_id: 'lucia' } });
      const etag3 = r.headers.etag as string;
      r = await put(script, etag3);
      expect(r.statusCode).toBe(200);
      const etag4 = r.headers.etag as string;
      // a segment whose speaker is not one of the script's is refused, naming the segment (generation never lends another voice)
      r = await put({ ...script, segments: script.segments.map((x: { speaker: string }, i: number) => (i === 1 ? { ...x, speaker: 'speaker_9' } : x)) }, etag4);
      expect(r.statusCode).toBe(400);
      expect(r.json()).toEqual({ detail: 'script.segments[1] (s2): speaker "speaker_9" is not one of the script\'s speakers (S1)' });
      r = await put({ ...script, speakers: [...script.speakers, { id: 'S2' }], segments: script.segments.map((x: { speaker: string }, i: number) => (i === 1 ? { ...x, speaker: 'S2' } : x)) }, etag4);
      expect(r.statusCode).toBe(200); // a speaker added to the script is one (generation gives it a default voice)
      const etag5 = r.headers.etag as string;
      r = await put({ ...script, speakers: [{ id: 'S1' }, { id: 'S1' }] }, etag5);
      expect(r.statusCode).toBe(400);
      expect(r.json().detail).toBe('script.speakers[1]: speaker id "S1" appears twice');
      r = await put(script, etag5);
      expect(r.statusCode).toBe(200);
      // the SRT reflects the edit
      expect((await inject('GET', `/v1/versions/${versionId}/srt`)).body).toContain('Hola a todos.');
      // not editable while Generating
      await inject('POST', `/v1/versions/${versionId}/generate`, { generate_mode: 'no_lips' });
      r = await put(script, r.headers.etag as string);
      expect(r.statusCode).toBe(400);
      expect(r.json().detail).toMatch(/is Generating; the script can be edited only when it is ReadyToEdit/);
    });

    it('quality report: 404 before the first generation, the generation\'s report.json after (key or studio link, not another org), 404 after revise', async () => {
      const { assetId, versionId } = await newAsset();
      const none = await inject('GET', `/v1/versions/${versionId}/report`);
      expect(none.statusCode).toBe(404);
      expect(none.json()).toEqual({ detail: `version ${versionId} has no quality report: it has no generated result (status NotReady)` });
      await prepareAsset(t, assetId);
      expect((await inject('POST', `/v1/versions/${versionId}/generate`, { generate_mode: 'no_lips' })).statusCode).toBe(202);
      expect((await inject('GET', `/v1/versions/${versionId}/report`)).json().detail).toMatch(/no generated result \(status Generating\)/);
      // the worker stores the report under the generation before its version_generated event
      const body = JSON.stringify({ schema: 'dub.quality-report/1', version_id: versionId, generation: 1, summary: { segments: 2, flagged: 1 } }, null, 2);
      await t.api.store.put(blobKeys.qualityReport(versionId, 1), body);
      await finishGeneration(t, assetId, versionId, 1);
      const r = await inject('GET', `/v1/versions/${versionId}/report`);
      expect(r.statusCode).toBe(200);
      expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(r.body).toBe(body);
      expect((await inject('GET', `/v1/versions/${versionId}/report`, undefined, {})).statusCode).toBe(401);
      expect((await inject('GET', `/v1/versions/${versionId}/report`, undefined, t.auth2)).statusCode).toBe(404);
      const link = new URL((await inject('POST', `/v1/versions/${versionId}/studio_url`, {})).json().studio_url);
      const viaStudio = await t.api.app.inject({ method: 'GET', url: `/v1/versions/${versionId}/report?expires=${link.searchParams.get('expires')}&sig=${link.searchParams.get('sig')}` });
      expect(viaStudio.statusCode, viaStudio.body).toBe(200);
      expect(viaStudio.body).toBe(body);
      // revise removes the result and its report
      expect((await inject('PATCH', `/v1/versions/${versionId}/revise`, {})).statusCode).toBe(200);
      expect(await t.api.store.has(blobKeys.qualityReport(versionId, 1))).toBe(false);
      expect((await inject('GET', `/v1/versions/${versionId}/report`)).statusCode).toBe(404);
    });

    it('POST /v1/dubbings/{id}/versions copies a version (ReadyToEdit at once)', async () => {
      const { assetId, versionId, dubbingId } = await newAsset();
      let r = await inject('POST', `/v1/dubbings/${dubbingId}/versions`, {});
      expect(r.statusCode).toBe(400);
      expect(r.json().detail).toMatch(/no script yet/);
      await prepareAsset(t, assetId);
      r = await inject('POST', `/v1/dubbings/${dubbingId}/versions`, { from_version_id: versionId, name: 'Review copy' });
      expect(r.statusCode).toBe(201);
      const nv = r.json();
      expect(nv).toMatchObject({ dubbing_id: dubbingId, asset_id: assetId, name: 'Review copy', status: 'ReadyToEdit', locale: 'es-ES' });
      const s = (await inject('GET', `/v1/versions/${nv.version_id}/script`)).json();
      expect(s.version_id).toBe(nv.version_id);
      expect(s.segments).toEqual(sampleScript(assetId, versionId).segments);
      const a = await asset(assetId);
      expect(a.languages[0].versions.map((v: { version_id: string }) => v.version_id)).toEqual([versionId, nv.version_id]);
      r = await inject('POST', `/v1/dubbings/${dubbingId}/versions`, {});
      expect(r.json().name).toBe('es-ES v3');
      expect((await inject('POST', `/v1/dubbings/${dubbingId}/versions`, { from_version_id: 'ver_x' })).statusCode).toBe(400);
      expect((await inject('POST', `/v1/dubbings/${dubbingId}/versions`, {}, t.auth2)).statusCode).toBe(404);
    });
  });
}
