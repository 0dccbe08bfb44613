/**
 * Glossaries through the API (extension of the contract, issue 23 item 5): given at creation (the
 * asset's and a language's), read back on the asset, replaced with PATCH /v1/assets/{asset_id},
 * validated with 400s naming the entry and the limit, and carried in the jobs' version specs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GLOSSARY_LIMITS } from '@dub/core';
import { createBody, dbKinds, postgresAvailable, prepareAsset, startTestApi, type TestApi } from './api-helpers.js';

const GLOSSARY = [
  { term: 'Vaultline', keep: true },
  { term: 'dubbing', translation: 'doblaje' },
];

for (const kind of dbKinds()) {
  describe(`glossaries (${kind})`, async () => {
    const skip = kind === 'postgres' && !(await postgresAvailable());
    if (skip) {
      it.skip('PostgreSQL at 127.0.0.1:5432 is unreachable: PostgreSQL variant skipped', () => undefined);
      return;
    }
    let t: TestApi;
    beforeAll(async () => {
      t = await startTestApi(kind);
    });
    afterAll(async () => t?.close());
    const post = (body: unknown) => t.api.app.inject({ method: 'POST', url: '/v1/assets/', headers: t.auth1, payload: body as object });
    const patch = (id: string, body: unknown, headers = t.auth1) => t.api.app.inject({ method: 'PATCH', url: `/v1/assets/${id}`, headers, payload: body as object });

    it('takes the asset\'s and a language\'s glossary at creation, shows them and sends them with each version', async () => {
      const r = await post(createBody({ glossary: [{ term: '  Vaultline ', keep: true }, GLOSSARY[1]], languages: [{ locale: 'es-ES', glossary: [{ term: 'dubbing', translation: 'doblado' }] }, { locale: 'fr-FR' }] }));
      expect(r.statusCode).toBe(201);
      const a = r.json();
      expect(a.glossary).toEqual(GLOSSARY);
      expect(a.languages[0].glossary).toEqual([{ term: 'dubbing', translation: 'doblado' }]);
      expect(a.languages[1]).not.toHaveProperty('glossary');
      const job = t.transport.jobsOf('prepare-asset').find((j) => j.asset_id === a.asset_id)!;
      // the language's entry replaces the asset's for the same term
      expect(job.versions.map((v) => [v.locale, v.glossary])).toEqual([
        ['es-ES', [{ term: 'Vaultline', keep: true }, { term: 'dubbing', translation: 'doblado' }]],
        ['fr-FR', GLOSSARY],
      ]);
      expect((await t.api.app.inject({ method: 'GET', url: `/v1/assets/${a.asset_id}`, headers: t.auth1 })).json().glossary).toEqual(GLOSSARY);
    });

    it('PATCH replaces or clears the glossaries; languages added later and versions prepared again get the new one', async () => {
      const a = (await post(createBody({ glossary: GLOSSARY }))).json();
      let r = await patch(a.asset_id, { glossary: [{ term: 'Vaultline', translation: 'Bóveda' }], languages: [{ locale: 'es-ES', glossary: [{ term: 'voice', translation: 'voz', case_sensitive: true }] }] });
      expect(r.statusCode).toBe(200);
      expect(r.json().glossary).toEqual([{ term: 'Vaultline', translation: 'Bóveda' }]);
      expect(r.json().languages[0].glossary).toEqual([{ term: 'voice', translation: 'voz', case_sensitive: true }]);
      expect((await t.api.app.inject({ method: 'GET', url: `/v1/assets/${a.asset_id}`, headers: t.auth1 })).json()).toEqual(r.json());
      await prepareAsset(t, a.asset_id);
      r = await t.api.app.inject({ method: 'POST', url: `/v1/assets/${a.asset_id}/languages`, headers: t.auth1, payload: { languages: [{ locale: 'de-DE', glossary: [{ term: 'dubbing', translation: 'Synchronisation' }] }] } });
      expect(r.statusCode).toBe(202);
      const de = t.transport.jobsOf('prepare-version').find((j) => j.asset_id === a.asset_id && j.version.locale === 'de-DE')!;
      expect(de.version.glossary).toEqual([{ term: 'Vaultline', translation: 'Bóveda' }, { term: 'dubbing', translation: 'Synchronisation' }]);
      r = await patch(a.asset_id, { glossary: null, languages: [{ locale: 'es-ES', glossary: [] }] });
      expect(r.statusCode).toBe(200);
      expect(r.json()).not.toHaveProperty('glossary');
      expect(r.json().languages[0]).not.toHaveProperty('glossary');
      expect(r.json().languages[1].glossary).toEqual([{ term: 'dubbing', translation: 'Synchronisation' }]);
    });

    it('400 with the entry and the rule for a bad glossary; 404 for another organization\'s asset', async () => {
      const cases: [unknown, RegExp][] = [
        ['Vaultline', /^glossary: must be an array/],
        [[{ term: '' , keep: true }], /^glossary\[0\]\.term must not be empty/],
        [[{ term: 'x' }], /^glossary\[0\]: give a translation, or keep: true to keep "x" as it is/],
        [[{ term: 'x', translation: 'y', keep: true }], /^glossary\[0\]: give either translation or keep: true, not both/],
        [[{ term: 'x'.repeat(GLOSSARY_LIMITS.maxTermChars + 1), keep: true }], /^glossary\[0\]\.term is 101 characters; at most 100 are allowed/],
        [[{ term: 'x', translation: 'y'.repeat(201) }], /^glossary\[0\]\.translation is 201 characters; at most 200/],
        [[{ term: 'a\nb', keep: true }], /^glossary\[0\]\.term must be one line/],
        [[{ term: 'Dubbing', keep: true }, { term: 'dubbing', translation: 'y' }], /^glossary\[1\]\.term "dubbing" repeats glossary\[0\]\.term/],
        [Array.from({ length: GLOSSARY_LIMITS.maxTerms + 1 }, (_, i) => ({ term: `t${i}`, keep: true })), /^glossary has 201 terms; at most 200 are allowed/],
      ];
      for (const [glossary, re] of cases) {
        const r = await post(createBody({ glossary }));
        expect(r.statusCode, JSON.stringify(glossary).slice(0, 80)).toBe(400);
        expect(r.json().detail).toMatch(re);
      }
      // case-sensitive terms may differ by case only
      expect((await post(createBody({ glossary: [{ term: 'Dub', keep: true, case_sensitive: true }, { term: 'dub', translation: 'd', case_sensitive: true }] }))).statusCode).toBe(201);
      let r = await post(createBody({ languages: [{ locale: 'es-ES', glossary: [{ term: 'x' }] }] }));
      expect(r.json().detail).toMatch(/^languages\[0\]\.glossary\[0\]: give a translation/);
      const a = (await post(createBody())).json();
      r = await patch(a.asset_id, {});
      expect(r.statusCode).toBe(400);
      expect(r.json().detail).toMatch(/give glossary and\/or languages\[\]\.glossary/);
      r = await patch(a.asset_id, { languages: [{ locale: 'it-IT', glossary: GLOSSARY }] });
      expect(r.json().detail).toMatch(/^languages\[0\]\.locale: the asset has no dubbing for "it-IT" \(its languages: es-ES\)/);
      r = await patch(a.asset_id, { glossary: GLOSSARY }, t.auth2);
      expect(r.statusCode).toBe(404);
    });

    it('checks a glossary of the largest size in linear time', async () => {
      const glossary = Array.from({ length: GLOSSARY_LIMITS.maxTerms }, (_, i) => ({ term: `${'a'.repeat(95)}${i}`, translation: 'b'.repeat(200) }));
      const t0 = performance.now();
      const r = await post(createBody({ glossary }));
      expect(r.statusCode).toBe(201);
      expect(r.json().glossary).toHaveLength(200);
      expect(performance.now() - t0).toBeLessThan(2_000);
    });
  });
}
