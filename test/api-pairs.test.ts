/**
 * Know before working (issue 23 item 3): creating an asset (JSON or upload) or adding a language
 * whose pair the engines here do not serve answers 400 before anything is created or enqueued,
 * naming the field, the stage, what is missing and the fix. The checker is the pipeline's
 * PairChecker, as `dub serve` passes it for its embedded worker, on a private apertium data
 * directory with eng-spa and spa-eng_US (apertium installed) so that the answers do not depend on
 * what this host installed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { engineChoiceFromEnv, PairChecker } from '@dub/pipeline';
import { loadTranslateConfig } from '@dub/translate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBody, startTestApi, tmpDir, type TestApi } from './api-helpers.js';

const apertium = ['/usr/bin/apertium', '/usr/local/bin/apertium'].some((f) => fs.existsSync(f));

describe.skipIf(!apertium)('API: a pair no engine here serves is 400 before any work (apertium needed)', () => {
  let t: TestApi;
  const dir = tmpDir('dub-pairs-');
  beforeAll(async () => {
    fs.mkdirSync(path.join(dir, 'modes'));
    for (const m of ['eng-spa', 'spa-eng_US']) fs.writeFileSync(path.join(dir, 'modes', `${m}.mode`), '');
    // M2M100 under an id that is nowhere: the answer does not depend on whether this host fetched the model
    const base = loadTranslateConfig({});
    const translate = { ...base, apertium: { bin: 'apertium', dataDir: dir, pivot: 'spa' }, m2m100: { ...base.m2m100, model: 'm2m100-absent-test' } };
    // pocketsphinx transcribes English only: a German source is not served
    t = await startTestApi('pglite', { pairs: new PairChecker({ choice: engineChoiceFromEnv({ DUB_ASR_ENGINE: 'pocketsphinx' }), translate, modelsDir: dir }) });
  });
  afterAll(async () => {
    await t?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const post = (body: unknown) => t.api.app.inject({ method: 'POST', url: '/v1/assets/', headers: t.auth1, payload: body as object });
  const assets = async () => (await t.api.app.inject({ method: 'GET', url: '/v1/assets/', headers: t.auth1 })).json().items as unknown[];

  it('a target no engine translates: 400 naming the field, the stage, the engine and the fix; no asset, no job', async () => {
    const r = await post(createBody({ languages: [{ locale: 'es-ES' }, { locale: 'de-DE' }] }));
    expect(r.statusCode).toBe(400);
    const detail = r.json().detail as string;
    expect(detail).toMatch(/^languages\[1\]\.locale: en-US -> de-DE is not supported for its role \(target\) here: translation: auto \(from DUB_TRANSLATE_ENGINE\) cannot translate en-US -> de-DE: apertium has no .*; M2M100: the M2M100 model \(m2m100-absent-test\) is not installed here; to fix: npx dub models fetch m2m100-absent-test .*; or set DUB_TRANSLATE_ENGINE_EN_DE /);
    expect(Object.keys(r.json())).toEqual(['detail']);
    expect(t.transport.jobs).toEqual([]);
    expect(await assets()).toEqual([]);
    // with a reference srt for de-DE translation is not needed
    const ok = await post(createBody({ languages: [{ locale: 'de-DE', srt: '1\n00:00:01,000 --> 00:00:02,000\nHallo.\n' }] }));
    expect(ok.statusCode).toBe(201);
  });

  it('a source no engine transcribes: 400 on the locale field; a source_srt replaces recognition', async () => {
    const before = t.transport.jobs.length;
    const r = await post(createBody({ locale: 'de-DE', languages: [{ locale: 'de-DE' }] }));
    expect(r.statusCode).toBe(400);
    expect(r.json().detail).toMatch(/^locale: de-DE is not supported for its role \(source\) here: speech recognition: .*pocketsphinx/);
    expect(t.transport.jobs.length).toBe(before);
    const ok = await post(createBody({ locale: 'de-DE', languages: [{ locale: 'de-DE' }], source_srt: '1\n00:00:01,000 --> 00:00:02,000\nHallo.\n' }));
    expect(ok.statusCode).toBe(201);
  });

  it('one language on both sides (en-US -> en-US) is accepted: passed through untranslated', async () => {
    const r = await post(createBody({ languages: [{ locale: 'en-US' }] }));
    expect(r.statusCode).toBe(201);
    expect(t.transport.jobsOf('prepare-asset').at(-1)).toMatchObject({ locale: 'en-US', versions: [{ locale: 'en-US' }] });
  });

  it('the upload is checked as the JSON create is', async () => {
    const boundary = 'dubpairs';
    const part = (name: string, body: string, extra = '') => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"${extra}\r\n\r\n${body}\r\n`;
    const { media_url: _, ...request } = createBody({ languages: [{ locale: 'de-DE' }] });
    const payload = part('request', JSON.stringify(request)) + part('video', 'not really a video', '; filename="v.mp4"\r\nContent-Type: video/mp4') + `--${boundary}--\r\n`;
    const r = await t.api.app.inject({ method: 'POST', url: '/v1/assets/upload', headers: { ...t.auth1, 'content-type': `multipart/form-data; boundary=${boundary}` }, payload });
    expect(r.statusCode).toBe(400);
    expect(r.json().detail).toMatch(/^languages\[0\]\.locale: en-US -> de-DE is not supported for its role \(target\) here: translation: /);
  });

  it('adding a language no engine serves: 400, the asset keeps its languages and no job leaves', async () => {
    const created = (await post(createBody())).json() as { asset_id: string; languages: unknown[] };
    const jobs = t.transport.jobs.length;
    const r = await t.api.app.inject({ method: 'POST', url: `/v1/assets/${created.asset_id}/languages`, headers: t.auth1, payload: { languages: [{ locale: 'fr-FR' }] } });
    expect(r.statusCode).toBe(400);
    expect(r.json().detail).toMatch(/^languages\[0\]\.locale: en-US -> fr-FR is not supported for its role \(target\) here: translation: /);
    expect(t.transport.jobs.length).toBe(jobs);
    const a = (await t.api.app.inject({ method: 'GET', url: `/v1/assets/${created.asset_id}`, headers: t.auth1 })).json() as { languages: unknown[] };
    expect(a.languages).toHaveLength(1);
    // another organization's asset is still not found
    const other = await t.api.app.inject({ method: 'POST', url: `/v1/assets/${created.asset_id}/languages`, headers: t.auth2, payload: { languages: [{ locale: 'fr-FR' }] } });
    expect(other.statusCode).toBe(404);
  });
});
