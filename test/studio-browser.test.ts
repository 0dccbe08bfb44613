/**
 * The studio page in headless Chromium against the API started in-process (MemoryTransport: the
 * test plays the worker). Signed link: segments render, an edit is saved and survives a reload
 * (the script blob changed), invalid times are refused, a concurrent save gives 412 and the page
 * re-applies the edit, the link's credential opens nothing outside its version, generate makes the
 * page read-only, polling picks up Completed (result player), SRT download, revise. Plain
 * studio_url: the page asks for the API key and keeps it out of the URL.
 * Needs Chromium at /usr/bin/chromium (Debian package `chromium`); skipped, visibly, without it.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { blobKeys, type Transcript, type VersionScript } from '@dub/core';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBody, finishGeneration, startTestApi, tmpDir, type TestApi } from './api-helpers.js';

const CHROMIUM = process.env.DUB_CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const SHOTS = process.env.DUB_STUDIO_SCREENSHOTS ?? path.join(os.tmpdir(), 'dub-studio-screenshots');
const DURATION = 12;
/** Waits for the page (generous: the suite may share two cores with model tests). */
const poll = <T>(fn: () => Promise<T>, timeout = 20_000) => expect.poll(fn, { timeout, interval: 100 });

function studioScript(assetId: string, versionId: string): VersionScript {
  return {
    v: 1,
    asset_id: assetId,
    version_id: versionId,
    source_locale: 'en-US',
    target_locale: 'es-ES',
    translation_engine: 'test',
    speakers: [{ id: 'S1' }, { id: 'S2' }],
    segments: [
      { id: 'g1', start: 0.5, end: 3.2, speaker: 'S1', source_text: 'Hello and welcome to the show.', target_text: 'Hola y bienvenidos al programa.' },
      { id: 'g2', start: 4.0, end: 7.5, speaker: 'S2', source_text: 'Today we talk about open source dubbing.', target_text: 'Hoy hablamos del doblaje de código abierto.' },
      { id: 'g3', start: 8.0, end: 11.0, speaker: 'S1', source_text: 'Thanks for listening.', target_text: 'Gracias por escuchar.' },
    ],
    updated_at: new Date().toISOString(),
  };
}

/** A real, small H.264/AAC MP4 (the source video and the "dubbed" result). */
function makeVideo(file: string, seconds: number, freq: number): Buffer {
  const r = spawnSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', `testsrc=size=160x120:rate=15:duration=${seconds}`, '-f', 'lavfi', '-i', `sine=frequency=${freq}:sample_rate=48000:duration=${seconds}`, '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', '-movflags', '+faststart', file]);
  if (r.status !== 0) throw new Error(`ffmpeg failed: ${r.stderr.toString()}`);
  return fs.readFileSync(file);
}

describe('studio page in Chromium', () => {
  if (!fs.existsSync(CHROMIUM)) {
    console.warn(`studio browser test skipped: Chromium is not installed at ${CHROMIUM} (apt-get install chromium)`);
    it.skip(`Chromium is not installed at ${CHROMIUM} (apt-get install chromium): the studio browser test is skipped`, () => undefined);
    return;
  }

  let t: TestApi;
  let base: string;
  let browser: Browser;
  let work: string;
  let assetId: string;
  let versionId: string;
  let otherVersionId: string;
  let link: URL;
  let resultVideo: Buffer;
  const pageErrors: string[] = [];

  /** A real HTTP call to the API with org1's key (the links it returns name the listening address). */
  async function call(method: 'GET' | 'POST' | 'PATCH' | 'PUT', url: string, payload?: unknown, headers: Record<string, string> = t.auth1) {
    const r = await fetch(`${base}${url}`, { method, headers: { ...headers, ...(payload !== undefined ? { 'content-type': 'application/json' } : {}) }, ...(payload !== undefined ? { body: JSON.stringify(payload) } : {}) });
    const text = await r.text();
    return { statusCode: r.status, headers: Object.fromEntries(r.headers), json: () => JSON.parse(text) };
  }
  const inject = (method: 'GET' | 'POST' | 'PATCH' | 'PUT', url: string, payload?: unknown) => call(method, url, payload);
  const storedScript = async (): Promise<VersionScript> => JSON.parse((await t.api.store.getBuffer(blobKeys.script(versionId))).toString('utf8')) as VersionScript;

  async function newAsset(name: string): Promise<{ assetId: string; versionId: string }> {
    const r = await inject('POST', '/v1/assets/', createBody({ name }));
    expect(r.statusCode).toBe(201);
    return { assetId: r.json().asset_id, versionId: r.json().languages[0].versions[0].version_id };
  }

  /** Play the worker: the asset is prepared (a real video) and the version gets our script. */
  async function prepare(aid: string, vid: string, video: Buffer): Promise<void> {
    const transcript: Transcript = { v: 1, locale: 'en-US', engine: 'test', duration: DURATION, speakers: [{ id: 'S1' }, { id: 'S2' }], segments: studioScript(aid, vid).segments.map((s) => ({ id: s.id, start: s.start, end: s.end, speaker: s.speaker, text: s.source_text, words: [] })) };
    await t.api.store.put(blobKeys.transcript(aid), JSON.stringify(transcript));
    await t.api.store.put(blobKeys.sourceVideo(aid), video);
    await t.transport.publish({ type: 'asset_prepared', job_id: `job_prep_${aid}`, asset_id: aid, duration: DURATION, source_video_key: blobKeys.sourceVideo(aid), transcript_key: blobKeys.transcript(aid) });
    await t.api.store.put(blobKeys.script(vid), JSON.stringify(studioScript(aid, vid)));
    await t.transport.publish({ type: 'version_prepared', job_id: `job_prepv_${vid}`, asset_id: aid, version_id: vid, script_key: blobKeys.script(vid) });
  }

  async function openPage(url: string): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1366, height: 860 } });
    page.on('pageerror', (e) => pageErrors.push(e.message));
    await page.goto(url);
    return page;
  }

  beforeAll(async () => {
    work = tmpDir('dub-studio-browser-');
    fs.mkdirSync(SHOTS, { recursive: true });
    t = await startTestApi('pglite');
    base = await t.api.listen(0);
    const source = makeVideo(path.join(work, 'source.mp4'), DURATION, 440);
    resultVideo = makeVideo(path.join(work, 'result.mp4'), DURATION, 660);
    ({ assetId, versionId } = await newAsset('Open source talk'));
    await prepare(assetId, versionId, source);
    const other = await newAsset('Another asset');
    otherVersionId = other.versionId;
    await prepare(other.assetId, other.versionId, source);
    const r = await inject('POST', `/v1/versions/${versionId}/studio_url`, { expiration_minutes: 30 });
    expect(r.statusCode).toBe(200);
    link = new URL(r.json().studio_url);
    expect(link.origin).toBe(base);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  it('serves the page and its files with their content types and caching', async () => {
    const page = await fetch(link);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('content-security-policy')).toMatch(/script-src 'self'/);
    const html = await page.text();
    const js = /src="([^"]+\/main\.js)"/.exec(html)![1]!;
    const css = /href="([^"]+\/studio\.css)"/.exec(html)![1]!;
    const m = await fetch(js);
    expect(m.status).toBe(200);
    expect(m.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(m.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const etag = m.headers.get('etag')!;
    expect((await fetch(js, { headers: { 'if-none-match': etag } })).status).toBe(304);
    expect((await fetch(css)).headers.get('content-type')).toBe('text/css; charset=utf-8');
    // other builds and other files are not served
    expect((await fetch(js.replace(/studio-assets\/[^/]+\//, 'studio-assets/000000000000/'))).status).toBe(404);
    expect((await fetch(js.replace('main.js', 'index.d.ts'))).status).toBe(404);
    expect((await fetch(js.replace('main.js', '..%2Fpackage.json'))).status).toBe(404);
  });

  it('signed link: shows the version, edits and saves a target text, the edit survives a reload', async () => {
    const page = await openPage(link.href);
    await poll(() => page.locator('#status').textContent()).toBe('ReadyToEdit');
    expect(await page.locator('h1').textContent()).toBe('Open source talk: es-ES v1');
    expect(await page.locator('#meta').textContent()).toContain('en-US → es-ES');
    const rows = page.locator('.segment-table tbody tr');
    expect(await rows.count()).toBe(3);
    expect(await rows.nth(1).locator('td.source').textContent()).toBe('Today we talk about open source dubbing.');
    // the speaker is a choice among the script's speakers (the segment can be moved to another)
    expect(await page.inputValue('#seg-2-speaker')).toBe('S2');
    expect(await page.locator('#seg-2-speaker option').allTextContents()).toEqual(['S1', 'S2']);
    expect(await page.inputValue('#seg-2-start')).toBe('0:04.000');
    expect(await page.inputValue('#seg-2-end')).toBe('0:07.500');
    expect(await page.inputValue('#seg-2-text')).toBe('Hoy hablamos del doblaje de código abierto.');
    expect(await page.locator('#speakers .speaker-head').allTextContents()).toEqual(['S1 2 segments, 5.7 s', 'S2 1 segment, 3.5 s']);
    // labels: every editable field has an accessible name
    expect(await page.getByLabel('Target text of segment 2').count()).toBe(1);
    expect(await page.locator('#save').isDisabled()).toBe(true);

    // the source player: "play source from here" seeks to the segment's start
    const video = page.locator('#source-video');
    expect(await video.getAttribute('src')).toMatch(new RegExp(`/v1/media/${assetId}/source\\?expires=\\d+&sig=`));
    await page.getByRole('button', { name: 'Play source of segment 2 (0:04.000 to 0:07.500)' }).click();
    await poll(() => video.evaluate((v: HTMLVideoElement) => v.currentTime)).toBeGreaterThanOrEqual(4);
    await video.evaluate((v: HTMLVideoElement) => v.pause());
    // each line's length and reading speed against the chosen SRT profile
    expect(await page.locator('#seg-2-reading').textContent()).toBe('43 characters \u00b7 12.3 characters/s (regular: up to 21/s)');
    await page.fill('#seg-3-text', 'Muchísimas gracias a todos por escuchar este programa.');
    expect(await page.locator('#seg-3-reading').textContent()).toBe('54 characters \u00b7 18.0 characters/s (regular: up to 21/s)');
    await page.selectOption('#srt-profile', 'mobile');
    expect(await page.locator('#seg-3-reading').textContent()).toBe("54 characters \u00b7 18.0 characters/s \u2014 faster than mobile's 17/s \u00b7 2 subtitles");
    expect(await page.locator('#seg-3-reading').getAttribute('class')).toBe('reading over');
    await page.click('#discard');
    await page.selectOption('#srt-profile', 'regular');
    expect(await video.evaluate((v: HTMLVideoElement) => v.error?.code ?? null)).toBeNull();

    // edit by keyboard: focus the target text, replace it, save
    await page.focus('#seg-2-text');
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.type('Hoy hablamos del doblaje libre.');
    expect(await page.locator('#dirty').textContent()).toBe('1 unsaved change');
    expect(await rows.nth(1).getAttribute('class')).toContain('changed');
    await page.click('#save');
    await poll(() => page.locator('#notice').textContent()).toBe('Saved 1 change.');
    const stored = await storedScript();
    expect(stored.segments[1]!.target_text).toBe('Hoy hablamos del doblaje libre.');
    expect(stored.segments[0]!.target_text).toBe('Hola y bienvenidos al programa.');

    await page.reload();
    await poll(() => page.inputValue('#seg-2-text')).toBe('Hoy hablamos del doblaje libre.');
    expect(await page.locator('#dirty').textContent()).toBe('No unsaved changes');
    await page.screenshot({ path: path.join(SHOTS, 'studio-ready-to-edit.png'), fullPage: true });
    await page.close();
  });

  it('signed link: invalid times are shown and not saved; a time edit is saved in seconds', async () => {
    const page = await openPage(link.href);
    await poll(() => page.locator('#status').textContent()).toBe('ReadyToEdit');
    const before = JSON.stringify((await storedScript()).segments);
    // overlap with the next segment
    await page.fill('#seg-1-end', '0:05');
    await page.press('#seg-1-end', 'Enter');
    expect(await page.inputValue('#seg-1-end')).toBe('0:05.000');
    expect(await page.getAttribute('#seg-1-end', 'aria-invalid')).toBe('true');
    expect(await page.locator('#seg-1-issues').textContent()).toContain('ends after the next segment starts (0:04.000)');
    expect(await page.locator('#seg-2-issues').textContent()).toContain('starts before the previous segment ends (0:05.000)');
    // not a time; outside the video
    await page.fill('#seg-3-start', 'soon');
    await page.press('#seg-3-start', 'Enter');
    await page.fill('#seg-3-end', '0:13');
    await page.press('#seg-3-end', 'Enter');
    expect(await page.locator('#seg-3-issues').textContent()).toMatch(/start: "soon" is not a time.*end: end is after the end of the video \(0:12\.000\)/);
    expect(await page.locator('#issues-summary').textContent()).toBe('4 problems to fix before saving.');
    await page.click('#save');
    await poll(() => page.locator('#error').textContent()).toContain('Fix the problems marked in the segments before saving.');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('seg-1-end');
    expect(JSON.stringify((await storedScript()).segments)).toBe(before);

    await page.click('#discard');
    expect(await page.inputValue('#seg-1-end')).toBe('0:03.200');
    expect(await page.locator('#issues-summary').textContent()).toBe('');
    await page.fill('#seg-3-end', '11.75');
    await page.press('#seg-3-end', 'Enter');
    await page.click('#save');
    await poll(() => page.locator('#notice').textContent()).toBe('Saved 1 change.');
    expect((await storedScript()).segments[2]!.end).toBe(11.75);
    await page.close();
  });

  it('signed link: when someone else saved first (412) the page reloads, re-applies the edit and says so', async () => {
    const page = await openPage(link.href);
    await poll(() => page.locator('#status').textContent()).toBe('ReadyToEdit');
    await page.fill('#seg-1-text', 'Hola a todos.');
    // someone else saves meanwhile (another field)
    const g = await inject('GET', `/v1/versions/${versionId}/script`);
    const theirs = g.json() as VersionScript;
    theirs.segments[2]!.target_text = 'Muchas gracias por escuchar.';
    const put = await call('PUT', `/v1/versions/${versionId}/script`, theirs, { ...t.auth1, 'if-match': g.headers.etag as string });
    expect(put.statusCode).toBe(200);

    await page.click('#save');
    await poll(() => page.locator('#error').textContent()).toMatch(/Someone else saved this script.*1 of your changes were applied to their version and are not saved yet/);
    expect(await page.inputValue('#seg-3-text')).toBe('Muchas gracias por escuchar.');
    expect(await page.inputValue('#seg-1-text')).toBe('Hola a todos.');
    expect(await page.locator('#dirty').textContent()).toBe('1 unsaved change');
    expect((await storedScript()).segments[0]!.target_text).toBe('Hola y bienvenidos al programa.');
    await page.click('#save');
    await poll(() => page.locator('#notice').textContent()).toBe('Saved 1 change.');
    const s = await storedScript();
    expect(s.segments.map((x) => x.target_text)).toEqual(['Hola a todos.', 'Hoy hablamos del doblaje libre.', 'Muchas gracias por escuchar.']);
    await page.close();
  });

  it("signed link: the link's credential reaches nothing outside its version", async () => {
    const page = await openPage(link.href);
    await poll(() => page.locator('#status').textContent()).toBe('ReadyToEdit');
    const token = link.search;
    const status = (url: string, init: { method?: string; body?: unknown } = {}) =>
      page.evaluate(
        async ([u, m, b]) => (await fetch(u, { method: m, ...(b === undefined ? {} : { body: JSON.stringify(b), headers: { 'content-type': 'application/json' } }) })).status,
        [url, init.method ?? 'GET', init.body] as const,
      );
    expect(await status(`/v1/versions/${versionId}${token}`)).toBe(200);
    expect(await status(`/v1/versions/${versionId}/studio/context${token}`)).toBe(200);
    expect(await status(`/v1/versions/${otherVersionId}${token}`)).toBe(403);
    expect(await status(`/v1/versions/${otherVersionId}/script${token}`)).toBe(403);
    expect(await status(`/v1/versions/${otherVersionId}/studio/context${token}`)).toBe(403);
    expect(await status(`/v1/versions/${otherVersionId}/generate${token}`, { method: 'POST', body: { generate_mode: 'no_lips' } })).toBe(403);
    expect(await status(`/studio/${otherVersionId}${token}`)).toBe(403);
    expect(await status(`/v1/assets/${assetId}${token}`)).toBe(401);
    expect(await status(`/v1/assets/${token}`)).toBe(401);
    expect(await status(`/v1/versions/${versionId}/studio_url${token}`, { method: 'POST', body: {} })).toBe(401);
    expect(await status(`/v1/versions/${versionId}/revise${token}`, { method: 'PATCH', body: { studio_url_request: { expiration_minutes: 43200 } } })).toBe(403);
    // a tampered link opens a page that says why, and no data
    const bad = new URL(link);
    bad.searchParams.set('expires', String(Number(bad.searchParams.get('expires')) + 3600));
    const denied = await openPage(bad.href);
    await poll(() => denied.locator('#error').textContent()).toContain('the studio link signature is invalid');
    expect(await denied.locator('.segment-table').count()).toBe(0);
    await denied.close();
    // the other version is untouched
    expect((await inject('GET', `/v1/versions/${otherVersionId}`)).json().status).toBe('ReadyToEdit');
    await page.close();
  });

  it('signed link: generate makes the page read-only while Generating; polling shows the result; SRT download; revise', async () => {
    const page = await openPage(link.href);
    await poll(() => page.locator('#status').textContent()).toBe('ReadyToEdit');
    const jobs = t.transport.jobsOf('generate-version').length;
    await page.selectOption('#generate-mode', 'no_lips');
    await page.click('#generate');
    await poll(() => page.locator('#status').textContent()).toBe('Generating');
    const job = t.transport.jobsOf('generate-version');
    expect(job.length).toBe(jobs + 1);
    expect(job[job.length - 1]).toMatchObject({ version_id: versionId, mode: 'no_lips' });

    // read-only, and it says why
    expect(await page.locator('#readonly-note').textContent()).toMatch(/being generated\. Editing is disabled/);
    expect(await page.getAttribute('#seg-1-text', 'readonly')).toBe('');
    expect(await page.getAttribute('#seg-2-start', 'readonly')).toBe('');
    expect(await page.locator('#save').isDisabled()).toBe(true);
    expect(await page.locator('#generate').isDisabled()).toBe(true);
    expect(await page.locator('#revise').isDisabled()).toBe(true);
    await page.screenshot({ path: path.join(SHOTS, 'studio-generating.png'), fullPage: true });
    // typing changes nothing; the server refuses an edit anyway
    await page.focus('#seg-1-text');
    await page.keyboard.type('xyz');
    expect(await page.inputValue('#seg-1-text')).toBe('Hola a todos.');
    const g = await inject('GET', `/v1/versions/${versionId}/script`);
    const put = await call('PUT', `/v1/versions/${versionId}/script${link.search}`, g.json(), { 'if-match': g.headers.etag as string });
    expect(put.statusCode).toBe(400);
    expect(put.json().detail).toMatch(/Generating; the script can be edited only when it is ReadyToEdit/);

    // the worker finishes; the page polls and shows the result
    const generation = (job[job.length - 1] as { generation: number }).generation;
    await finishGeneration(t, assetId, versionId, generation, resultVideo);
    await poll(() => page.locator('#status').textContent(), 30_000).toBe('Completed');
    const result = page.locator('#result-video');
    expect(await result.getAttribute('src')).toMatch(new RegExp(`/v1/downloads/${versionId}/${generation}/video\\?expires=\\d+&sig=`));
    await poll(() => result.evaluate((v: HTMLVideoElement) => v.readyState)).toBeGreaterThanOrEqual(1);
    expect(await result.evaluate((v: HTMLVideoElement) => Math.round(v.duration))).toBe(DURATION);
    expect(await page.locator('#revise').isEnabled()).toBe(true);
    expect(await page.locator('#readonly-note').textContent()).toMatch(/Revise returns the version to editing/);
    await page.screenshot({ path: path.join(SHOTS, 'studio-completed.png'), fullPage: true });

    // SRT download (target, mobile profile) with the link's credential
    await page.selectOption('#srt-profile', 'mobile');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download-srt')]);
    expect(download.suggestedFilename()).toBe(`${versionId}-target-mobile.srt`);
    const srt = fs.readFileSync((await download.path())!, 'utf8');
    expect(srt).toMatch(/^1\r?\n00:00:00,500 --> /);
    expect(srt).toContain('Hola a todos.');
    // an API error is shown with its detail
    await page.selectOption('#srt-locality', 'source');
    await t.api.store.delete(blobKeys.transcript(assetId));
    await page.click('#download-srt');
    await poll(() => page.locator('#error').textContent()).toMatch(/source transcript of asset \S+ is not ready yet .*\(HTTP 400\)/);

    // revise (confirmed) returns it to editing and removes the result
    page.once('dialog', (d) => void d.accept());
    await page.click('#revise');
    await poll(() => page.locator('#status').textContent()).toBe('ReadyToEdit');
    expect(await page.locator('#result-video').count()).toBe(0);
    expect(await page.getAttribute('#seg-1-text', 'readonly')).toBeNull();
    expect((await inject('GET', `/v1/versions/${versionId}`)).json().result_url).toBeUndefined();
    await page.close();
  });

  it('plain studio_url: the page asks for the API key, keeps it in sessionStorage, never in the URL', async () => {
    const plain = (await inject('GET', `/v1/versions/${versionId}`)).json().studio_url as string;
    expect(plain).toBe(`${base}/v1/versions/${versionId}/studio`);
    const page = await openPage(plain);
    await poll(() => page.locator('#api-key').count()).toBe(1);
    expect(await page.locator('.segment-table').count()).toBe(0);
    await page.getByLabel('API key', { exact: true }).fill('not-a-key');
    await page.getByRole('button', { name: 'Open the studio' }).click();
    await poll(() => page.locator('#error').textContent()).toContain('The API key was not accepted (401)');
    await page.getByLabel('API key', { exact: true }).fill('key-two'); // another organization's key
    await page.keyboard.press('Enter');
    await poll(() => page.locator('#error').textContent()).toContain(`version ${versionId} not found (HTTP 404)`);

    await page.goto(plain);
    await page.getByLabel('API key', { exact: true }).fill('key-one');
    await page.keyboard.press('Enter');
    await poll(() => page.locator('#status').textContent()).toBe('ReadyToEdit');
    expect(await page.inputValue('#seg-1-text')).toBe('Hola a todos.');
    expect(page.url()).toBe(plain);
    expect(await page.evaluate(() => sessionStorage.getItem('dub-studio-api-key'))).toBe('key-one');
    // a reload in the same tab keeps the key; the page stays signed in
    await page.reload();
    await poll(() => page.locator('#status').textContent()).toBe('ReadyToEdit');
    await page.getByRole('button', { name: 'Forget API key' }).click();
    expect(await page.evaluate(() => sessionStorage.getItem('dub-studio-api-key'))).toBeNull();
    expect(await page.locator('#api-key').count()).toBe(1);
    await page.close();
  });

  it('right-to-left targets: the text fields, the cells and the timeline blocks of an Arabic version are written right to left', async () => {
    const r = await inject('POST', '/v1/assets/', createBody({ name: 'Arabic', languages: [{ locale: 'ar-AE' }] }));
    expect(r.statusCode).toBe(201);
    const aid = r.json().asset_id as string;
    const vid = r.json().languages[0].versions[0].version_id as string;
    await prepare(aid, vid, makeVideo(path.join(work, 'ar.mp4'), DURATION, 330));
    const script = studioScript(aid, vid);
    script.target_locale = 'ar-AE';
    script.segments = script.segments.map((s, i) => ({ ...s, target_text: ['مرحبا بكم في البرنامج.', 'نتحدث اليوم عن الدبلجة المفتوحة.', 'شكرا للاستماع.'][i]! }));
    script.speakers = [{ id: 'S1', name: 'Layla' }, { id: 'S2' }];
    await t.api.store.put(blobKeys.script(vid), JSON.stringify(script));
    const u = await inject('POST', `/v1/versions/${vid}/studio_url`, {});
    const page = await openPage(u.json().studio_url);
    await poll(() => page.locator('#status').textContent()).toBe('ReadyToEdit');
    expect(await page.getAttribute('#seg-1-text', 'dir')).toBe('rtl');
    expect(await page.getAttribute('#seg-1-text', 'lang')).toBe('ar-AE');
    expect(await page.locator('.segment-table thead th').nth(4).getAttribute('dir')).toBe('rtl');
    expect(await page.locator('#block-1').getAttribute('dir')).toBe('rtl');
    expect(await page.locator('#block-1').textContent()).toBe('مرحبا بكم في البرنامج.');
    expect(await page.locator('#seg-1 td.source').getAttribute('dir')).toBe('ltr');
    expect(await page.locator('#seg-1-text').evaluate((el) => getComputedStyle(el).direction)).toBe('rtl');
    expect(await page.locator('#seg-1-reading').textContent()).toMatch(/^22 characters/);
    // a speaker's saved name is shown with its label
    expect(await page.locator('.lane').first().getAttribute('aria-label')).toBe('Speaker Layla (S1)');
    expect(await page.locator('#speakers .speaker-head').allTextContents()).toEqual(['Layla (S1) 2 segments, 5.7 s', 'S2 1 segment, 3.5 s']);
    expect(await page.inputValue('#speaker-0-name')).toBe('Layla');
    await page.screenshot({ path: path.join(SHOTS, 'studio-rtl.png') });
    await page.close();
  });

  it('the page raised no script errors', () => {
    expect(pageErrors).toEqual([]);
  });
});
