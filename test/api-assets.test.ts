/** Assets: auth, every create/upload validation rule, listing, reading, adding languages (fastify inject). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBody, dbKinds, postgresAvailable, startTestApi, type TestApi } from './api-helpers.js';

const VALID_SRT = '1\n00:00:01,000 --> 00:00:02,500\nHola\n\n2\n00:00:03,000 --> 00:00:04,000\nAdiós\n';

for (const kind of dbKinds()) {
  describe(`assets (${kind})`, async () => {
    const skip = kind === 'postgres' && !(await postgresAvailable());
    if (skip) {
      it.skip('PostgreSQL at 127.0.0.1:5432 is unreachable: PostgreSQL variant skipped', () => undefined);
      return;
    }
    let t: TestApi;
    beforeAll(async () => {
      t = await startTestApi(kind, { orgBalances: { org2: 0 } });
    });
    afterAll(async () => t?.close());

    const post = (body: unknown, headers: Record<string, string> = t.auth1) => t.api.app.inject({ method: 'POST', url: '/v1/assets/', headers, payload: body as object });

    it('requires a valid bearer key with a {detail} body', async () => {
      for (const headers of [{}, { authorization: 'Bearer nope' }, { authorization: 'Basic a2V5LW9uZQ==' }, { authorization: 'Bearer key-one-x' }]) {
        const r = await t.api.app.inject({ method: 'GET', url: '/v1/assets/', headers });
        expect(r.statusCode).toBe(401);
        expect(r.json().detail).toMatch(/API key/);
      }
    });

    it('answers unknown routes with 404 {detail}', async () => {
      const r = await t.api.app.inject({ method: 'GET', url: '/v1/nothing', headers: t.auth1 });
      expect(r.statusCode).toBe(404);
      expect(r.json()).toEqual({ detail: expect.stringContaining('/v1/nothing') });
    });

    it('creates an asset (201) with one dubbing and version per language and enqueues prepare-asset', async () => {
      const r = await post(createBody({ languages: [{ locale: 'es-ES', srt: VALID_SRT }, { locale: 'fr-FR' }], speakers_count: 2, start_time: 1, end_time: 30, source_srt: 'just some text', extra_field: 'ignored' }));
      expect(r.statusCode).toBe(201);
      const a = r.json();
      expect(a.asset_id).toMatch(/^ast_[a-z2-7]{24}$/);
      expect(a).toMatchObject({ name: 'Interview', locale: 'en-US', status: 'Dubbing', duration: null });
      expect(a.languages.map((l: { locale: string }) => l.locale)).toEqual(['es-ES', 'fr-FR']);
      for (const l of a.languages) expect(l.versions).toEqual([{ version_id: expect.stringMatching(/^ver_/), voice_over: false }]);
      const job = t.transport.jobsOf('prepare-asset').find((j) => j.asset_id === a.asset_id)!;
      expect(job).toMatchObject({ locale: 'en-US', media: { url: 'http://127.0.0.1:9/video.mp4' }, speakers_count: 2, start_time: 1, end_time: 30, source_srt: 'just some text', org_id: 'org1' });
      expect(job.versions.map((v) => [v.locale, v.srt])).toEqual([
        ['es-ES', VALID_SRT],
        ['fr-FR', undefined],
      ]);
      expect(job.limits).toEqual({ allow_private_urls: true });
    });

    it('truncates names longer than 255 characters', async () => {
      const r = await post(createBody({ name: 'x'.repeat(300) }));
      expect(r.statusCode).toBe(201);
      expect(r.json().name).toHaveLength(255);
    });

    const invalid: [string, Record<string, unknown>, RegExp][] = [
      ['missing name', { name: undefined }, /^name: is required/],
      ['empty name', { name: '   ' }, /^name: must not be empty/],
      ['name not a string', { name: 5 }, /^name: must be a string/],
      ['unsupported source locale', { locale: 'th-TH' }, /^locale: unsupported source locale "th-TH"/],
      ['unknown locale', { locale: 'xx-XX' }, /^locale: unsupported source locale/],
      ['unsupported target locale', { languages: [{ locale: 'he-IL' }] }, /^languages\[0\]\.locale: unsupported target locale "he-IL"/],
      ['no languages', { languages: [] }, /^languages: at least one/],
      ['missing languages', { languages: undefined }, /^languages: is required/],
      ['duplicate target locales', { languages: [{ locale: 'es-ES' }, { locale: 'es-ES' }] }, /^languages\[1\]\.locale: duplicate target locale/],
      ['invalid SRT', { languages: [{ locale: 'es-ES', srt: 'this is not srt' }] }, /^languages\[0\]\.srt: invalid SRT/],
      ['a reference SRT ffmpeg would garble', { languages: [{ locale: 'es-ES', srt: '1\n00:00:01,000 --> 00:00:02,000\nHola\n\n2\n00:00:03,000 -> 00:00:04,000\nAdiós\n' }] }, /^languages\[0\]\.srt: invalid SRT: line 6: .*its arrow is not "-->"; fix: /],
      ['a source_srt with timing lines it cannot read', { source_srt: '1\n00:00:01 --> 00:00:02\nhello\n' }, /^source_srt: invalid SRT: line 2: "00:00:01 --> 00:00:02" looks like a timing line but "00:00:01" has no milliseconds; fix: /],
      ['bad auto_generate', { auto_generate: 'always' }, /^auto_generate: must be one of off, with_lips, no_lips/],
      ['bad lips_model', { lips_model: 'cartoon' }, /^lips_model: must be one of real_face, real_face_turbo/],
      ['voice_anonymization > 1', { voice_anonymization: 1.5 }, /^voice_anonymization: must be <= 1/],
      ['voice_anonymization < 0', { voice_anonymization: -0.1 }, /^voice_anonymization: must be >= 0/],
      ['speakers_count 0', { speakers_count: 0 }, /^speakers_count: must be >= 1/],
      ['speakers_count fractional', { speakers_count: 1.5 }, /^speakers_count: must be an integer/],
      ['speakers_count string', { speakers_count: '2' }, /^speakers_count: must be an integer/],
      ['negative start_time', { start_time: -1 }, /^start_time: must be >= 0/],
      ['end before start', { start_time: 10, end_time: 5 }, /^end_time: must be greater than start_time/],
      ['missing media_url', { media_url: undefined }, /^media_url: is required/],
      ['media_url not a URL', { media_url: 'video.mp4' }, /^media_url is not a valid URL/],
      ['media_url bad scheme', { media_url: 'file:///etc/passwd' }, /^media_url must use http or https/],
      ['background_url bad', { background_url: 'ftp://x/y' }, /^background_url must use http or https/],
      ['speech_url bad', { speech_url: 'nope' }, /^speech_url is not a valid URL/],
      ['callback_url bad', { callback_url: 'gopher://x' }, /^callback_url must use/],
      ['voice_over without library voice', { voice_over: true }, /voice_over_library_required/],
      ['voice_over with lips', { voice_over: true, voice_library_id: 'ana', auto_generate: 'with_lips' }, /voice_over_with_lips_not_allowed/],
      ['unknown library voice', { voice_library_id: 'nobody' }, /^voice_library_id: unknown library voice/],
      ['voice_over not boolean', { voice_over: 'yes' }, /^voice_over: must be a boolean/],
    ];
    it.each(invalid)('400 for %s', async (_what, over, detail) => {
      const before = t.transport.jobs.length;
      const r = await post(createBody(over));
      expect(r.statusCode).toBe(400);
      expect(r.json().detail).toMatch(detail);
      expect(t.transport.jobs.length).toBe(before);
    });

    it('accepts SRT as ffmpeg reads it (index 0, no index, 1-digit fields, CR line ends, coordinates) in languages[].srt and source_srt', async () => {
      const tolerant = '0\r0:0:1,5 --> 0:0:2.25 X1:1 X2:2 Y1:3 Y2:4\rHola\r\r00:00:03,000 --> 00:00:04,000\rAdiós\r';
      const r = await post(createBody({ languages: [{ locale: 'es-ES', srt: tolerant }], source_srt: tolerant.replace('Hola', 'Hello').replace('Adiós', 'Bye') }));
      expect(r.statusCode).toBe(201);
    });

    it('400 for a body that is not JSON or not an object', async () => {
      const r = await t.api.app.inject({ method: 'POST', url: '/v1/assets/', headers: { ...t.auth1, 'content-type': 'application/json' }, payload: '{"name": ' });
      expect(r.statusCode).toBe(400);
      expect(r.json().detail).toMatch(/body: invalid JSON/);
      const r2 = await t.api.app.inject({ method: 'POST', url: '/v1/assets/', headers: { ...t.auth1, 'content-type': 'text/plain' }, payload: 'hi' });
      expect(r2.statusCode).toBe(400);
      expect(r2.json().detail).toMatch(/^body: must be an object/);
    });

    it('allows voice_over with a library voice and no_lips', async () => {
      const r = await post(createBody({ voice_over: true, voice_library_id: 'ana', auto_generate: 'no_lips' }));
      expect(r.statusCode).toBe(201);
      expect(r.json().languages[0].versions[0].voice_over).toBe(true);
    });

    it('refuses private media and http callbacks without the development flag', async () => {
      const strict = await startTestApi(kind, { allowPrivateUrls: false });
      try {
        const p = (over: Record<string, unknown>) => strict.api.app.inject({ method: 'POST', url: '/v1/assets/', headers: strict.auth1, payload: createBody(over) });
        let r = await p({ media_url: 'http://127.0.0.1/v.mp4' });
        expect(r.statusCode).toBe(400);
        expect(r.json().detail).toMatch(/media_url: host "127.0.0.1" resolves to a loopback address/);
        r = await p({ media_url: 'http://[::ffff:10.0.0.1]/v.mp4' });
        expect(r.json().detail).toMatch(/media_url: .* private address/);
        r = await p({ media_url: 'http://169.254.169.254/latest', callback_url: 'https://8.8.8.8/cb' });
        expect(r.json().detail).toMatch(/link-local/);
        r = await p({ media_url: 'https://8.8.8.8/v.mp4', callback_url: 'http://8.8.8.8/cb' });
        expect(r.statusCode).toBe(400);
        expect(r.json().detail).toMatch(/^callback_url must use https/);
        r = await p({ media_url: 'https://8.8.8.8/v.mp4', background_url: 'http://localhost/b.wav' });
        expect(r.json().detail).toMatch(/background_url: host "localhost" resolves to a loopback address/);
        r = await p({ media_url: 'https://8.8.8.8/v.mp4', callback_url: 'https://8.8.8.8/cb' });
        expect(r.statusCode).toBe(201);
        expect(strict.transport.jobsOf('prepare-asset')[0]!.limits).toEqual({});
      } finally {
        await strict.close();
      }
    });

    it('403 for auto_generate when the balance is exhausted, before anything is created (rule 3)', async () => {
      const before = (await t.api.app.inject({ method: 'GET', url: '/v1/assets/', headers: t.auth2 })).json().items.length;
      for (const auto of ['with_lips', 'no_lips']) {
        const r = await post(createBody({ auto_generate: auto }), t.auth2);
        expect(r.statusCode).toBe(403);
        expect(r.json().detail).toMatch(/insufficient_balance/);
      }
      const after = (await t.api.app.inject({ method: 'GET', url: '/v1/assets/', headers: t.auth2 })).json().items.length;
      expect(after).toBe(before);
      // auto_generate off does not need balance
      expect((await post(createBody({ auto_generate: 'off' }), t.auth2)).statusCode).toBe(201);
    });

    it('passes account limits to the worker', async () => {
      const lim = await startTestApi(kind, { maxVideoSeconds: 600, maxMediaBytes: 1_000_000, orgLimits: { org2: { maxVideoSeconds: 30 } } });
      try {
        await lim.api.app.inject({ method: 'POST', url: '/v1/assets/', headers: lim.auth1, payload: createBody() });
        await lim.api.app.inject({ method: 'POST', url: '/v1/assets/', headers: lim.auth2, payload: createBody() });
        const [j1, j2] = lim.transport.jobsOf('prepare-asset');
        expect(j1!.limits).toMatchObject({ max_video_seconds: 600, max_media_bytes: 1_000_000 });
        expect(j2!.limits).toMatchObject({ max_video_seconds: 30, max_media_bytes: 1_000_000 });
      } finally {
        await lim.close();
      }
    });

    it('lists assets newest first with cursor pagination, only the caller\'s', async () => {
      const fresh = await startTestApi(kind);
      try {
        const ids: string[] = [];
        for (let i = 0; i < 5; i++) ids.push((await fresh.api.app.inject({ method: 'POST', url: '/v1/assets/', headers: fresh.auth1, payload: createBody({ name: `a${i}` }) })).json().asset_id);
        await fresh.api.app.inject({ method: 'POST', url: '/v1/assets/', headers: fresh.auth2, payload: createBody({ name: 'other' }) });
        const seen: string[] = [];
        let cursor: string | null = null;
        let pages = 0;
        do {
          const r = await fresh.api.app.inject({ method: 'GET', url: `/v1/assets/?limit=2${cursor ? `&cursor=${cursor}` : ''}`, headers: fresh.auth1 });
          expect(r.statusCode).toBe(200);
          const body = r.json();
          expect(body.items.length).toBeLessThanOrEqual(2);
          for (const a of body.items) {
            expect(a.languages[0].versions[0].version_id).toMatch(/^ver_/);
            seen.push(a.asset_id);
          }
          cursor = body.next_cursor;
          pages++;
        } while (cursor && pages < 10);
        expect(seen).toEqual([...ids].reverse());
        expect(pages).toBe(3);
        const def = (await fresh.api.app.inject({ method: 'GET', url: '/v1/assets/', headers: fresh.auth1 })).json();
        expect(def.items).toHaveLength(5);
        expect(def.next_cursor).toBeNull();
        for (const bad of ['limit=0', 'limit=101', 'limit=abc', 'cursor=zzz']) {
          const r = await fresh.api.app.inject({ method: 'GET', url: `/v1/assets/?${bad}`, headers: fresh.auth1 });
          expect(r.statusCode, bad).toBe(400);
          expect(r.json().detail).toMatch(/limit|cursor/);
        }
      } finally {
        await fresh.close();
      }
    });

    it('reads an asset; another organization gets 404', async () => {
      const a = (await post(createBody())).json();
      const r = await t.api.app.inject({ method: 'GET', url: `/v1/assets/${a.asset_id}`, headers: t.auth1 });
      expect(r.statusCode).toBe(200);
      expect(r.json()).toEqual(a);
      const other = await t.api.app.inject({ method: 'GET', url: `/v1/assets/${a.asset_id}`, headers: t.auth2 });
      expect(other.statusCode).toBe(404);
      expect(other.json().detail).toMatch(/not found/);
      expect((await t.api.app.inject({ method: 'GET', url: '/v1/assets/ast_missing', headers: t.auth1 })).statusCode).toBe(404);
    });

    it('adds languages (202): a new dubbing per locale; existing or invalid locales 400', async () => {
      const a = (await post(createBody())).json();
      const url = `/v1/assets/${a.asset_id}/languages`;
      let r = await t.api.app.inject({ method: 'POST', url, headers: t.auth1, payload: { languages: [{ locale: 'de-DE', srt: VALID_SRT }], auto_generate: 'off' } });
      expect(r.statusCode).toBe(202);
      expect(r.json().languages.map((l: { locale: string }) => l.locale)).toEqual(['es-ES', 'de-DE']);
      // The asset is not prepared yet: no prepare-version job until asset_prepared.
      expect(t.transport.jobsOf('prepare-version').filter((j) => j.asset_id === a.asset_id)).toHaveLength(0);
      r = await t.api.app.inject({ method: 'POST', url, headers: t.auth1, payload: { languages: [{ locale: 'es-ES' }] } });
      expect(r.statusCode).toBe(400);
      expect(r.json().detail).toMatch(/already has a dubbing for "es-ES"/);
      r = await t.api.app.inject({ method: 'POST', url, headers: t.auth1, payload: { languages: [{ locale: 'ur-IN' }] } });
      expect(r.json().detail).toMatch(/unsupported target locale "ur-IN"/);
      r = await t.api.app.inject({ method: 'POST', url, headers: t.auth1, payload: { languages: [{ locale: 'it-IT', srt: '1\nbroken' }] } });
      expect(r.json().detail).toMatch(/languages\[0\]\.srt: invalid SRT/);
      r = await t.api.app.inject({ method: 'POST', url, headers: t.auth1, payload: { languages: [] } });
      expect(r.statusCode).toBe(400);
      r = await t.api.app.inject({ method: 'POST', url, headers: t.auth1, payload: { languages: [{ locale: 'it-IT' }], auto_generate: 'sometimes' } });
      expect(r.json().detail).toMatch(/auto_generate: must be one of/);
      r = await t.api.app.inject({ method: 'POST', url, headers: t.auth2, payload: { languages: [{ locale: 'it-IT' }] } });
      expect(r.statusCode).toBe(404);
    });
  });
}
