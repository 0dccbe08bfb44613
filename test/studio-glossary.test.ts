/**
 * The studio's Glossary panel in headless Chromium against the API started in-process
 * (MemoryTransport: the test plays the worker). A signed link shows the asset's and its
 * language's glossary and the line whose translation missed a term, edits and saves its
 * language's terms (the asset's stay read-only: the link may not change them, the API answers 403),
 * and the API key's page edits the asset's too.
 * Needs Chromium at /usr/bin/chromium (Debian package `chromium`); skipped, visibly, without it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { blobKeys, type Transcript, type VersionScript } from '@dub/core';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBody, startTestApi, type TestApi } from './api-helpers.js';

const CHROMIUM = process.env.DUB_CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const SHOTS = process.env.DUB_STUDIO_SCREENSHOTS ?? path.join(os.tmpdir(), 'dub-studio-screenshots');
const poll = <T>(fn: () => Promise<T>, timeout = 20_000) => expect.poll(fn, { timeout, interval: 100 });

describe('studio glossary panel in Chromium', () => {
  if (!fs.existsSync(CHROMIUM)) {
    it.skip(`Chromium is not installed at ${CHROMIUM} (apt-get install chromium): the studio glossary test is skipped`, () => undefined);
    return;
  }
  let t: TestApi;
  let base: string;
  let browser: Browser;
  let assetId: string;
  let versionId: string;
  let link: string;
  const pageErrors: string[] = [];

  async function call(method: string, url: string, payload?: unknown, headers: Record<string, string> = t.auth1) {
    const r = await fetch(`${base}${url}`, { method, headers: { ...headers, ...(payload !== undefined ? { 'content-type': 'application/json' } : {}) }, ...(payload !== undefined ? { body: JSON.stringify(payload) } : {}) });
    const text = await r.text();
    return { status: r.status, json: () => JSON.parse(text) };
  }

  async function openPage(url: string): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1366, height: 860 } });
    page.on('pageerror', (e) => pageErrors.push(e.message));
    await page.goto(url);
    return page;
  }

  beforeAll(async () => {
    t = await startTestApi('pglite');
    base = await t.api.listen(0);
    const r = await call('POST', '/v1/assets/', createBody({ glossary: [{ term: 'Vaultline', keep: true }], languages: [{ locale: 'es-ES', glossary: [{ term: 'dubbing', translation: 'doblaje' }] }] }));
    expect(r.status).toBe(201);
    assetId = r.json().asset_id;
    versionId = r.json().languages[0].versions[0].version_id;
    const segments = [
      { id: 'g1', start: 0.5, end: 3, speaker: 'S1', source_text: 'Vaultline makes dubbing simple.', target_text: 'Vaultline hace el doblado sencillo.', glossary: [
        { term: 'Vaultline', expected: 'Vaultline', keep: true, applied: true },
        { term: 'dubbing', expected: 'doblaje', keep: false, applied: false, reason: 'the translation does not contain "doblaje"' },
      ] },
      { id: 'g2', start: 4, end: 6, speaker: 'S1', source_text: 'Thanks.', target_text: 'Gracias.' },
    ];
    const transcript: Transcript = { v: 1, locale: 'en-US', engine: 'test', duration: 8, speakers: [{ id: 'S1' }], segments: segments.map((s) => ({ id: s.id, start: s.start, end: s.end, speaker: s.speaker, text: s.source_text, words: [] })) };
    await t.api.store.put(blobKeys.transcript(assetId), JSON.stringify(transcript));
    await t.api.store.put(blobKeys.sourceVideo(assetId), Buffer.from('not a real video'));
    await t.transport.publish({ type: 'asset_prepared', job_id: `job_prep_${assetId}`, asset_id: assetId, duration: 8, source_video_key: blobKeys.sourceVideo(assetId), transcript_key: blobKeys.transcript(assetId) });
    const script: VersionScript = { v: 1, asset_id: assetId, version_id: versionId, source_locale: 'en-US', target_locale: 'es-ES', translation_engine: 'apertium', speakers: [{ id: 'S1' }], segments, updated_at: new Date().toISOString() };
    await t.api.store.put(blobKeys.script(versionId), JSON.stringify(script));
    await t.transport.publish({ type: 'version_prepared', job_id: `job_prepv_${versionId}`, asset_id: assetId, version_id: versionId, script_key: blobKeys.script(versionId) });
    const s = await call('POST', `/v1/versions/${versionId}/studio_url`, { expiration_minutes: 30 });
    link = s.json().studio_url;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('signed link: shows both glossaries and the missed term; saves its language\'s terms only', async () => {
    const page = await openPage(link);
    const panel = page.locator('#glossary-panel');
    await poll(() => panel.locator('summary').textContent()).toContain('Glossary (2 terms)');
    expect(await panel.locator('summary').textContent()).toContain('1 not carried');
    await panel.locator('summary').click();
    expect(await page.inputValue('#glossary-language-0-term')).toBe('dubbing');
    expect(await page.inputValue('#glossary-language-0-translation')).toBe('doblaje');
    expect(await page.inputValue('#glossary-asset-0-term')).toBe('Vaultline');
    expect(await page.isDisabled('#glossary-asset-0-term')).toBe(true);
    expect(await page.isChecked('#glossary-asset-0-keep')).toBe(true);
    expect(await page.locator('#glossary-missed').textContent()).toBe('Line 1: "dubbing" should read "doblaje"');
    // add a kept term and save
    await page.click('#glossary-add-language');
    await page.fill('#glossary-language-1-term', 'Studio Spark');
    await page.check('#glossary-language-1-keep');
    expect(await page.isDisabled('#glossary-language-1-translation')).toBe(true);
    await page.click('#glossary-save');
    await poll(() => page.locator('#glossary-status').textContent()).toContain('Glossary saved');
    fs.mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SHOTS, 'studio-glossary-link.png') });
    const a = (await call('GET', `/v1/assets/${assetId}`)).json();
    expect(a.languages[0].glossary).toEqual([{ term: 'dubbing', translation: 'doblaje' }, { term: 'Studio Spark', keep: true }]);
    expect(a.glossary).toEqual([{ term: 'Vaultline', keep: true }]);
    // a row without a translation is named, nothing is sent
    await page.click('#glossary-add-language');
    await page.fill('#glossary-language-2-term', 'voice');
    await page.click('#glossary-save');
    await poll(() => page.locator('#glossary-status').textContent()).toBe('Row 3: give "voice" a translation, or tick "keep as is".');
    await page.close();
    // the link's credential may not change the asset's glossary
    const q = new URL(link).search;
    const r = await call('PUT', `/v1/versions/${versionId}/glossary${q}`, { asset: [{ term: 'x', keep: true }] }, {});
    expect(r.status).toBe(403);
    expect(r.json().detail).toMatch(/studio link changes only its own language's glossary/);
  });

  it('API key: edits the asset\'s glossary too', async () => {
    const page = await openPage(`${base}/v1/versions/${versionId}/studio`);
    await page.fill('#api-key', 'key-one');
    await page.click('.key-form button[type=submit]');
    const panel = page.locator('#glossary-panel');
    await poll(() => panel.locator('summary').textContent()).toContain('Glossary (3 terms)');
    await panel.locator('summary').click();
    expect(await page.isDisabled('#glossary-asset-0-term')).toBe(false);
    await page.uncheck('#glossary-asset-0-keep');
    await page.fill('#glossary-asset-0-translation', 'Bóveda');
    await page.click('#glossary-save');
    await poll(() => page.locator('#glossary-status').textContent()).toContain('Glossary saved');
    expect((await call('GET', `/v1/assets/${assetId}`)).json().glossary).toEqual([{ term: 'Vaultline', translation: 'Bóveda' }]);
    await page.close();
  });

  it('the page raised no script errors', () => {
    expect(pageErrors).toEqual([]);
  });
});
