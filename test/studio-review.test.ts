/**
 * The studio as a reviewer uses it, in headless Chromium, on a real recording prepared by the
 * real pipeline: `dub serve` (embedded queue and worker: separation, VAD, ASR, speakers and
 * translation really run) gets the two-speaker phone call as a video, and the signed studio link
 * is opened. Checked: the waveform (served by the API) and one lane per speaker render; a click
 * on a block selects its row; Play source plays a segment's span; dragging an edge changes the
 * time, snapping to a pause, and saving persists it; split, merge, undo/redo and the keyboard
 * shortcuts; a stale save gets the 412 merge flow; accessible names and the layout at 1280x720
 * and 820x1180; after a real generation, Play dub and the quality report's figures (when the API
 * serves GET /v1/versions/{id}/report; skipped, saying so, when it does not).
 * Needs Chromium (/usr/bin/chromium or DUB_CHROMIUM_PATH) and the real recording; skipped,
 * visibly, without either.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { VersionScript } from '@dub/core';
import { decodeWaveform, findSilences, type WaveformBody } from '@dub/studio';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort, spawnDub, waitFor, waitHealthy, type DubProcess } from './e2e-helpers.js';
import { videoFromWav } from './prepare-helpers.js';
import { describeWithMedia, media } from './support/media.js';

const CHROMIUM = process.env.DUB_CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--autoplay-policy=no-user-gesture-required'];
const SHOTS = process.env.DUB_STUDIO_SCREENSHOTS ?? path.join(os.tmpdir(), 'dub-studio-screenshots');
const RECORDING = 'two-speakers-call.wav';
const KEY = 'studio-review-key';
const auth = { authorization: `Bearer ${KEY}` };
/** Waits for the page (generous: the suite may share two cores with model tests). */
const poll = <T>(fn: () => Promise<T>, timeout = 20_000) => expect.poll(fn, { timeout, interval: 100 });

const describeStudio = fs.existsSync(CHROMIUM)
  ? (title: string, body: () => void) => describeWithMedia([RECORDING], title, body)
  : (title: string) => describeWithMedia([], title, () => it.skip(`Chromium is not installed at ${CHROMIUM} (apt-get install chromium): the studio review test is skipped`, () => undefined));

describeStudio('studio review on a real recording prepared by dub serve', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-studio-review-'));
  let server: DubProcess;
  let base = '';
  let browser: Browser;
  let versionId = '';
  let link = '';
  let waveform: WaveformBody;
  const pageErrors: string[] = [];

  const api = async (method: string, url: string, body?: unknown, headers: Record<string, string> = {}) => {
    const r = await fetch(`${base}${url}`, { method, headers: { ...auth, ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    const text = await r.text();
    return { status: r.status, headers: r.headers, json: () => JSON.parse(text) as Record<string, unknown>, text };
  };
  const stored = async () => (await api('GET', `/v1/versions/${versionId}/script`)).json() as unknown as VersionScript;

  async function openPage(width = 1280, height = 720): Promise<Page> {
    const page = await browser.newPage({ viewport: { width, height } });
    page.on('pageerror', (e) => pageErrors.push(e.message));
    await page.goto(link);
    await poll(() => page.locator('#status').textContent()).toBe('ReadyToEdit');
    return page;
  }

  /** Client x of time t on the timeline, and the time of a client x. */
  const trackGeometry = (page: Page) =>
    page.evaluate(() => {
      const track = document.querySelector<HTMLElement>('.timeline-track')!;
      return { left: track.getBoundingClientRect().left, pps: Number(getComputedStyle(track).getPropertyValue('--pps')) };
    });

  beforeAll(async () => {
    fs.mkdirSync(SHOTS, { recursive: true });
    const video = videoFromWav(media(RECORDING), path.join(dir, 'call.mp4'));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    server = spawnDub(['serve', '--port', String(port), '--host', '127.0.0.1', '--data-dir', path.join(dir, 'data')], { DUB_API_KEYS: `${KEY}:org1`, DUB_ONNX_THREADS: '2', DUB_TTS_ENGINE: 'espeak-ng' }); // the voice is not under test here: espeak-ng keeps the generation short
    await waitHealthy(base, server, 180_000); // PGlite and the worker threads start slowly on a busy machine
    const form = new FormData();
    form.set('request', JSON.stringify({ name: 'Phone call', locale: 'en-US', languages: [{ locale: 'es-ES' }] }));
    form.set('video', new Blob([fs.readFileSync(video)], { type: 'video/mp4' }), 'call.mp4');
    const created = await fetch(`${base}/v1/assets/upload`, { method: 'POST', headers: auth, body: form });
    expect(created.status, server.log()).toBe(201);
    versionId = ((await created.json()) as { languages: { versions: { version_id: string }[] }[] }).languages[0]!.versions[0]!.version_id;
    await waitFor('ReadyToEdit', async () => {
      const v = (await api('GET', `/v1/versions/${versionId}`)).json();
      if (v.status === 'Failed') throw new Error(`version failed: ${JSON.stringify(v.error)}\n${server.log()}`);
      return v.status === 'ReadyToEdit' ? v : undefined;
    }, 420_000);
    link = String((await api('POST', `/v1/versions/${versionId}/studio_url`, { expiration_minutes: 120 })).json().studio_url);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
  }, 600_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('renders the waveform from the API, one lane per speaker and one block per segment', async () => {
    const script = await stored();
    expect(script.segments.length).toBeGreaterThan(2);
    const page = await openPage();
    // the waveform is the API's (computed from the source video's audio), not decoded in the page
    const w = await api('GET', `/v1/versions/${versionId}/waveform`);
    expect(w.status).toBe(200);
    waveform = w.json() as unknown as WaveformBody;
    expect(waveform.duration).toBeGreaterThan(29.5);
    expect(waveform.count).toBe(Math.ceil(waveform.duration * waveform.rate - 1e-9));
    await poll(() => page.locator('#waveform-status').textContent()).toMatch(/^\d+ pauses found$/);
    const silences = findSilences(decodeWaveform(waveform));
    expect(await page.locator('#waveform-status').textContent()).toBe(`${silences.length} pauses found`);
    // the canvas has the waveform drawn: many columns of the waveform colour (drawn on the next
    // animation frame after the status line is set, so polled)
    const drawn = () => page.evaluate(() => {
      const c = document.querySelector<HTMLCanvasElement>('.timeline-canvas')!;
      const d = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 0; i < d.length; i += 4) if (d[i] === 0x3b && d[i + 1] === 0x6e && d[i + 2] === 0xa8) n++;
      return n;
    });
    await poll(drawn).toBeGreaterThan(1000);
    const speakers = [...new Set([...script.speakers.map((s) => s.id), ...script.segments.map((s) => s.speaker)])];
    expect(await page.locator('.lane').count()).toBe(speakers.length);
    for (const [i, id] of speakers.entries()) {
      const lane = page.getByRole('group', { name: `Speaker ${id}`, exact: true });
      expect(await lane.locator('.block').count()).toBe(script.segments.filter((s) => s.speaker === id).length);
      expect(await page.locator('.lane').nth(i).getAttribute('aria-label')).toBe(`Speaker ${id}`);
    }
    expect(await page.locator('.segment-table tbody tr').count()).toBe(script.segments.length);
    // a block sits at its segment's time
    const g = await trackGeometry(page);
    const s = script.segments[1]!;
    const box = (await page.locator('#block-2').boundingBox())!;
    expect(Math.abs(box.x - (g.left + s.start * g.pps))).toBeLessThan(1.5);
    expect(Math.abs(box.width - (s.end - s.start) * g.pps)).toBeLessThan(1.5);
    await page.screenshot({ path: path.join(SHOTS, 'studio-loaded-1280x720.png') });
    await page.close();
  });

  it('clicking a block selects its row and moves the playhead there; Play source plays that span and stops at its end', async () => {
    const script = await stored();
    const page = await openPage();
    const n = Math.min(3, script.segments.length);
    const s = script.segments[n - 1]!;
    const box = (await page.locator(`#block-${n}`).boundingBox())!;
    await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
    await poll(() => page.locator(`#seg-${n}`).getAttribute('aria-current')).toBe('true');
    expect(await page.locator('.segment-table tr[aria-current="true"]').count()).toBe(1);
    expect(await page.locator(`#block-${n}`).getAttribute('class')).toContain('selected');
    const g = await trackGeometry(page);
    const clicked = (box.x + box.width / 2 - g.left) / g.pps;
    const video = page.locator('#source-video');
    await poll(() => video.evaluate((v: HTMLVideoElement) => v.currentTime)).toBeCloseTo(clicked, 1);
    // the row is in view
    expect(await page.locator(`#seg-${n}`).isVisible()).toBe(true);
    await page.screenshot({ path: path.join(SHOTS, 'studio-1280x720.png') });

    await page.locator(`#seg-${n}-play-source`).click();
    await poll(() => video.evaluate((v: HTMLVideoElement) => !v.paused)).toBe(true);
    // the video's state goes into the failure message, so a stall (network, decoder) can be told
    // from a span that played past its end
    const state = () => video.evaluate((v: HTMLVideoElement) => ({ paused: v.paused, t: v.currentTime, readyState: v.readyState, networkState: v.networkState, buffered: Array.from({ length: v.buffered.length }, (_, i) => [v.buffered.start(i), v.buffered.end(i)]), error: v.error?.message ?? null }));
    await expect.poll(state, { timeout: 45_000, interval: 100, message: `span ${s.start}-${s.end} s did not stop` }).toMatchObject({ paused: true });
    const t = await video.evaluate((v: HTMLVideoElement) => v.currentTime);
    expect(Math.abs(t - s.end)).toBeLessThan(0.05);
    // Play dub needs a generated result: disabled, and says why
    expect(await page.locator(`#seg-${n}-play-dub`).isDisabled()).toBe(true);
    expect(await page.locator('#dub-note').textContent()).toMatch(/Not generated yet/);
    await page.close();
  });

  it('dragging an edge changes the time, snapping to a pause (Alt: not); saving persists it', async () => {
    const script = await stored();
    const silences = findSilences(decodeWaveform(waveform));
    // a segment with a pause starting well inside it: its end edge can be dragged onto that pause
    let pick: { n: number; b: number } | undefined;
    for (const [i, s] of script.segments.entries()) {
      const p = silences.find((x) => x.start > s.start + 0.4 && x.start < s.end - 0.2);
      if (p) {
        pick = { n: i + 1, b: p.start };
        break;
      }
    }
    expect(pick, `no pause inside any segment among ${silences.length} pauses`).toBeDefined();
    const { n, b } = pick!;
    const before = script.segments[n - 1]!;
    const page = await openPage();
    await page.locator(`#block-${n}`).click();
    const dragTo = async (t: number, dx: number, alt: boolean) => {
      const g = await trackGeometry(page);
      const h = (await page.locator(`#block-${n}-end`).boundingBox())!;
      await page.mouse.move(h.x + h.width / 2, h.y + h.height / 2);
      await page.mouse.down();
      if (alt) await page.keyboard.down('Alt');
      await page.mouse.move(g.left + t * g.pps + dx, h.y + h.height / 2, { steps: 6 });
      await page.mouse.up();
      if (alt) await page.keyboard.up('Alt');
      return g;
    };
    // within a few pixels of the pause: the end lands on it
    const g = await dragTo(b, 4, false);
    await poll(() => page.locator(`#block-${n}-end`).getAttribute('aria-valuenow')).toBe(String(b));
    const formatted = await page.inputValue(`#seg-${n}-end`);
    expect(formatted).toMatch(/^\d+:\d\d\.\d{3}$/);
    expect(await page.locator('#dirty').textContent()).toBe('1 unsaved change');
    // the block follows
    // measured again: the timeline may have scrolled to keep the edited edge in view
    const g1 = await trackGeometry(page);
    const box = (await page.locator(`#block-${n}`).boundingBox())!;
    expect(Math.abs(box.x + box.width - (g1.left + b * g1.pps))).toBeLessThan(1.5);
    // Alt held: no snapping, the edge goes where the pointer is
    await dragTo(b, 4, true);
    const free = Number((await page.locator(`#block-${n}-end`).getAttribute('aria-valuenow'))!);
    expect(Math.abs(free - (b + 4 / g.pps))).toBeLessThan(1.5 / g.pps + 0.001);
    expect(free).not.toBe(b);
    // a press on the edge without a move changes nothing
    await dragTo(free, 0, false);
    expect(Number(await page.locator(`#block-${n}-end`).getAttribute('aria-valuenow'))).toBe(free);
    // undo takes back both drags to the saved time, redo brings back the first (the snapped one)
    await page.locator('#undo').click();
    await page.locator('#undo').click();
    expect(Number(await page.locator(`#block-${n}-end`).getAttribute('aria-valuenow'))).toBe(before.end);
    await page.locator('#redo').click();
    expect(Number(await page.locator(`#block-${n}-end`).getAttribute('aria-valuenow'))).toBe(b);
    await page.locator('#save').click();
    await poll(() => page.locator('#notice').textContent()).toBe('Saved 1 change.');
    expect((await stored()).segments[n - 1]!.end).toBe(b);
    await page.reload();
    await poll(() => page.inputValue(`#seg-${n}-end`)).toBe(formatted);
    // the keyboard moves an edge too: Right on the focused start edge, 50 ms
    const startHandle = page.locator(`#block-${n}-start`);
    await page.locator(`#block-${n}`).click();
    await startHandle.focus();
    const s0 = Number(await startHandle.getAttribute('aria-valuenow'));
    await page.keyboard.press('ArrowRight');
    expect(Number(await startHandle.getAttribute('aria-valuenow'))).toBeCloseTo(s0 + 0.05, 6);
    await page.locator('#discard').click();
    expect(Number(await startHandle.getAttribute('aria-valuenow'))).toBe(s0);
    await page.close();
  });

  it('split at the playhead, merge with the next, undo and redo, from buttons and shortcuts', async () => {
    const script = await stored();
    const count = script.segments.length;
    const i = script.segments.findIndex((s) => s.end - s.start > 1.5 && s.target_text.trim().split(/\s+/).length >= 2);
    expect(i).toBeGreaterThanOrEqual(0);
    const s = script.segments[i]!;
    const n = i + 1;
    const page = await openPage();
    const rows = page.locator('.segment-table tbody tr');
    // click the block at a third of its length: selected, playhead there; S splits it there
    const g = await trackGeometry(page);
    const box = (await page.locator(`#block-${n}`).boundingBox())!;
    const at = s.start + (s.end - s.start) / 2;
    await page.mouse.click(g.left + at * g.pps, box.y + box.height / 2);
    const playhead = await page.locator('#source-video').evaluate((v: HTMLVideoElement) => v.currentTime);
    expect(Math.abs(playhead - at)).toBeLessThan(2 / g.pps);
    await page.keyboard.press('s');
    await poll(() => rows.count()).toBe(count + 1);
    const cut = Number(await page.locator(`#block-${n}`).getAttribute('data-end'));
    expect(Math.abs(cut - playhead)).toBeLessThan(0.0011);
    expect(Number(await page.locator(`#block-${n + 1}`).getAttribute('data-start'))).toBe(cut);
    expect(Number(await page.locator(`#block-${n + 1}`).getAttribute('data-end'))).toBe(s.end);
    // the selected block's edges are sliders named after it
    expect(await page.locator(`#block-${n + 1}-start`).getAttribute('aria-label')).toBe(`Start of segment ${n + 1}`);
    expect(await page.locator(`#block-${n}-start`).count()).toBe(0);
    const left = await page.inputValue(`#seg-${n}-text`);
    const right = await page.inputValue(`#seg-${n + 1}-text`);
    expect(left.length).toBeGreaterThan(0);
    expect(right.length).toBeGreaterThan(0);
    expect(`${left} ${right}`).toBe(s.target_text.trim().replace(/\s+/g, ' '));
    expect(await page.locator('#notice').textContent()).toBe(`Segment ${n} split at ${await page.inputValue(`#seg-${n}-end`)} into segments ${n} and ${n + 1}.`);
    expect(await page.locator('#dirty').textContent()).toBe('2 unsaved changes');
    // the second part is selected; up selects the first; M merges them back
    expect(await page.locator(`#seg-${n + 1}`).getAttribute('aria-current')).toBe('true');
    await page.keyboard.press('ArrowUp');
    expect(await page.locator(`#seg-${n}`).getAttribute('aria-current')).toBe('true');
    await page.keyboard.press('m');
    await poll(() => rows.count()).toBe(count);
    expect(await page.inputValue(`#seg-${n}-text`)).toBe(s.target_text.trim().replace(/\s+/g, ' '));
    expect(Number(await page.locator(`#block-${n}`).getAttribute('data-end'))).toBe(s.end);
    // undo (Ctrl+Z): split again; again: as loaded; redo (Ctrl+Shift+Z) twice: merged
    await page.keyboard.press('Control+z');
    await poll(() => rows.count()).toBe(count + 1);
    await page.keyboard.press('Control+z');
    expect(await rows.count()).toBe(count);
    expect(await page.locator('#dirty').textContent()).toBe('No unsaved changes');
    expect(await page.locator('#undo').isDisabled()).toBe(true);
    await page.keyboard.press('Control+Shift+z');
    expect(await rows.count()).toBe(count + 1);
    await page.locator('#redo').click();
    expect(await rows.count()).toBe(count);
    expect(await page.locator('#redo').isDisabled()).toBe(true);
    // a merge across speakers is refused with the reason
    const j = script.segments.findIndex((x, k) => script.segments[k + 1] && script.segments[k + 1]!.speaker !== x.speaker);
    if (j >= 0) {
      await page.locator(`#block-${j + 1}`).click();
      await page.locator('#merge').click();
      expect(await page.locator('#error').textContent()).toMatch(/Cannot merge: segments \d+ and \d+ have different speakers/);
    }
    // split then save: the stored script has both parts
    await page.mouse.click(g.left + at * g.pps, box.y + box.height / 2);
    await page.locator('#split').click();
    await poll(() => rows.count()).toBe(count + 1);
    await page.keyboard.press('Control+s');
    await poll(() => page.locator('#notice').textContent()).toBe('Saved 2 changes.');
    const after = await stored();
    expect(after.segments.length).toBe(count + 1);
    expect(after.segments[i + 1]!.id).toBe(`${s.id}.2`);
    expect(after.segments[i]!.end).toBe(after.segments[i + 1]!.start);
    // and merged back, saved: as before (ids and times)
    await page.locator(`#block-${n}`).click();
    await page.keyboard.press('m');
    await page.keyboard.press('Control+s');
    await poll(() => page.locator('#notice').textContent()).toBe('Saved 2 changes.');
    expect((await stored()).segments.map((x) => [x.id, x.start, x.end])).toEqual(script.segments.map((x) => [x.id, x.start, x.end]));
    await page.close();
  });

  it('keyboard only: Tab to the timeline, arrows between segments, Enter to edit, Esc back, Space plays, K pauses, ? shows the shortcuts', async () => {
    const page = await openPage();
    await page.locator('#snap').focus();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.closest('.block') !== null)).toBe(true);
    // no block selected yet: the first block is the tab stop
    expect(await page.evaluate(() => document.activeElement?.id || document.activeElement?.closest('.block')?.id)).toBe('block-1');
    await poll(() => page.locator('#seg-1').getAttribute('aria-current')).toBe('true');
    await page.keyboard.press('ArrowRight');
    expect(await page.locator('#seg-2').getAttribute('aria-current')).toBe('true');
    expect(await page.evaluate(() => document.activeElement?.closest('.block')?.id)).toBe('block-2');
    await page.keyboard.press('ArrowDown');
    expect(await page.locator('#seg-3').getAttribute('aria-current')).toBe('true');
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('seg-3-text');
    await page.keyboard.press('Escape');
    expect(await page.evaluate(() => document.activeElement?.closest('.block')?.id)).toBe('block-3');
    const video = page.locator('#source-video');
    await page.keyboard.press(' ');
    await poll(() => video.evaluate((v: HTMLVideoElement) => !v.paused)).toBe(true);
    await page.keyboard.press('k');
    await poll(() => video.evaluate((v: HTMLVideoElement) => v.paused)).toBe(true);
    await page.keyboard.press('l');
    await poll(() => video.evaluate((v: HTMLVideoElement) => !v.paused)).toBe(true);
    await page.keyboard.press('l');
    expect(await video.evaluate((v: HTMLVideoElement) => v.playbackRate)).toBe(1.5);
    await page.keyboard.press('k');
    const t0 = await video.evaluate((v: HTMLVideoElement) => v.currentTime);
    await page.keyboard.press('j');
    expect(await video.evaluate((v: HTMLVideoElement) => v.currentTime)).toBeCloseTo(Math.max(0, t0 - 5), 1);
    await page.keyboard.press('Shift+?');
    expect(await page.locator('#shortcuts-dialog').evaluate((d: HTMLDialogElement) => d.open)).toBe(true);
    await page.keyboard.press('Escape');
    expect(await page.locator('#shortcuts-dialog').evaluate((d: HTMLDialogElement) => d.open)).toBe(false);
    // typing a letter in a text field types it (no shortcut), Ctrl+S saves from there
    await page.locator('#seg-3-text').focus();
    await page.keyboard.press('End');
    await page.keyboard.type(' s m');
    expect(await page.locator('.segment-table tbody tr').count()).toBe((await stored()).segments.length);
    await page.keyboard.press('Control+s');
    await poll(() => page.locator('#notice').textContent()).toBe('Saved 1 change.');
    expect((await stored()).segments[2]!.target_text.endsWith(' s m')).toBe(true);
    await page.close();
  });

  it('a stale save gets the 412 merge flow: their edit kept, my split and text edit re-applied', async () => {
    const page = await openPage();
    const script = await stored();
    const count = script.segments.length;
    const i = script.segments.findIndex((s) => s.end - s.start > 1);
    const k = i === 0 ? 1 : 0;
    const m = script.segments.findIndex((_, x) => x !== i && x !== k);
    // mine: split segment i in the middle, edit segment k's text
    const g = await trackGeometry(page);
    const box = (await page.locator(`#block-${i + 1}`).boundingBox())!;
    const s = script.segments[i]!;
    await page.mouse.click(g.left + ((s.start + s.end) / 2) * g.pps, box.y + box.height / 2);
    await page.locator('#split').click();
    const kRow = k > i ? k + 2 : k + 1;
    await page.fill(`#seg-${kRow}-text`, 'Mi cambio.');
    // theirs, saved first: another segment's text
    const g0 = await api('GET', `/v1/versions/${versionId}/script`);
    const theirs = g0.json() as unknown as VersionScript;
    theirs.segments[m]!.target_text = 'Su cambio.';
    expect((await api('PUT', `/v1/versions/${versionId}/script`, theirs, { 'if-match': g0.headers.get('etag')! })).status).toBe(200);
    await page.locator('#save').click();
    await poll(() => page.locator('#error').textContent()).toMatch(/Someone else saved this script.*3 of your changes were applied to their version and are not saved yet/);
    expect(await page.locator('.segment-table tbody tr').count()).toBe(count + 1);
    expect(await page.inputValue(`#seg-${kRow}-text`)).toBe('Mi cambio.');
    const mRow = m > i ? m + 2 : m + 1;
    expect(await page.inputValue(`#seg-${mRow}-text`)).toBe('Su cambio.');
    expect((await stored()).segments.length).toBe(count);
    await page.locator('#save').click();
    await poll(() => page.locator('#notice').textContent()).toBe('Saved 3 changes.');
    const after = await stored();
    expect(after.segments.length).toBe(count + 1);
    expect(after.segments.map((x) => x.target_text)).toEqual(expect.arrayContaining(['Mi cambio.', 'Su cambio.']));
    await page.close();
  });

  it('accessible: every control has a name; usable at 1280x720 and at 820x1180 without sideways scrolling', async () => {
    for (const [w, hgt] of [[1280, 720], [820, 1180]] as const) {
      const page = await openPage(w, hgt);
      await poll(() => page.locator('#waveform-status').textContent()).toMatch(/pauses found/);
      const cdp = await page.context().newCDPSession(page);
      const { nodes } = (await cdp.send('Accessibility.getFullAXTree')) as { nodes: { ignored: boolean; role?: { value: string }; name?: { value: string } }[] };
      const controls = nodes.filter((x) => !x.ignored && ['button', 'textbox', 'combobox', 'slider', 'checkbox', 'tab', 'link', 'spinbutton'].includes(x.role?.value ?? ''));
      expect(controls.length).toBeGreaterThan(20);
      const unnamed = controls.filter((x) => !(x.name?.value ?? '').trim()).map((x) => x.role?.value);
      expect(unnamed).toEqual([]);
      // nothing sticks out sideways; the players, the timeline and the segments are there
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(w);
      for (const sel of ['#source-video', '#timeline', '.segment-table', '#save', '#zoom']) expect(await page.locator(sel).isVisible(), `${sel} at ${w}x${hgt}`).toBe(true);
      if (w === 1280) {
        // one screen: the page does not scroll, the timeline and the first rows are in it
        expect(await page.evaluate(() => document.documentElement.scrollHeight)).toBeLessThanOrEqual(hgt);
        const tl = (await page.locator('#timeline').boundingBox())!;
        expect(tl.y + tl.height).toBeLessThanOrEqual(hgt);
        expect(((await page.locator('#seg-1').boundingBox())!).y).toBeLessThan(hgt);
      }
      await page.screenshot({ path: path.join(SHOTS, `studio-layout-${w}x${hgt}.png`), fullPage: w !== 1280 });
      await page.close();
    }
  });

  it("after a real generation: Play dub plays the dubbed line over the segment's span; the quality report's figures and flags", async (ctx) => {
    const gen = await api('POST', `/v1/versions/${versionId}/generate`, { generate_mode: 'no_lips' });
    expect(gen.status, gen.text).toBe(202);
    await waitFor('Completed', async () => {
      const v = (await api('GET', `/v1/versions/${versionId}`)).json();
      if (v.status === 'Failed') throw new Error(`generation failed: ${JSON.stringify(v.error)}\n${server.log()}`);
      return v.status === 'Completed' ? v : undefined;
    }, 420_000);
    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    page.on('pageerror', (e) => pageErrors.push(e.message));
    await page.goto(link);
    await poll(() => page.locator('#status').textContent()).toBe('Completed');
    const script = await stored();
    const n = 2;
    const s = script.segments[n - 1]!;
    const dub = page.locator('#result-video');
    await poll(() => dub.evaluate((v: HTMLVideoElement) => v.readyState)).toBeGreaterThanOrEqual(1);
    expect(await page.locator('#tab-source').getAttribute('aria-selected')).toBe('true');
    await page.locator(`#seg-${n}-play-dub`).click();
    expect(await page.locator('#tab-dub').getAttribute('aria-selected')).toBe('true');
    expect(await page.locator('#panel-dub').isVisible()).toBe(true);
    await poll(() => dub.evaluate((v: HTMLVideoElement) => !v.paused)).toBe(true);
    await poll(() => dub.evaluate((v: HTMLVideoElement) => v.paused), 30_000).toBe(true);
    expect(Math.abs((await dub.evaluate((v: HTMLVideoElement) => v.currentTime)) - s.end)).toBeLessThan(0.05);
    expect(await dub.evaluate((v: HTMLVideoElement) => v.error)).toBeNull();
    await page.screenshot({ path: path.join(SHOTS, 'studio-dub-1280x720.png') });

    const rep = await api('GET', `/v1/versions/${versionId}/report`);
    if (rep.status === 404 && /^no route/.test(String(rep.json().detail))) {
      await page.close();
      ctx.skip(`the API has no quality report endpoint yet (GET /v1/versions/{id}/report answered 404 "${String(rep.json().detail)}"): the report part of this test is skipped`);
      return;
    }
    expect(rep.status, rep.text).toBe(200);
    const report = rep.json() as unknown as { segments: { id: string; speed_factor: number; rate_ratio?: number | null; overflow_ms: number; turn?: { id: number }; flags: string[] }[]; summary: { segments: number; flagged: number } };
    await poll(() => page.locator('#report-summary').textContent()).toContain(`${report.summary.flagged} of ${report.summary.segments} lines flagged`);
    for (const q of report.segments) {
      const row = page.locator(`tr[data-segment-id="${q.id}"]`);
      const speed = row.locator('.figure-speed .figure-value');
      expect(await speed.textContent()).toBe(`${q.speed_factor.toFixed(2)}x`);
      // the rate ratio (dubbed pace / the speaker's) right after the speed
      expect(await row.locator('.figure-speed + .figure-rate .figure-value').textContent()).toBe(q.rate_ratio == null ? 'n/a' : `${q.rate_ratio.toFixed(2)}x`);
      // the time past the slot, with the turn the line was placed in (reports placed by turns)
      expect(await row.locator('.figure-overflow .figure-value').textContent()).toBe(`${(q.overflow_ms / 1000).toFixed(2)} s${q.turn ? `, turn ${q.turn.id}` : ''}`);
      for (const f of ['speed', 'rate', 'overflow', 'wer', 'similarity']) expect(await row.locator(`.figure-${f}`).getAttribute('class')).toBe(`figure figure-${f}${q.flags.includes(f) ? ' flagged' : ''}`);
    }
    const flagged = report.segments.filter((q) => q.flags.length).length;
    await page.locator('#only-flagged').check();
    expect(await page.locator('.segment-table tbody tr:not([hidden])').count()).toBe(flagged);
    await page.screenshot({ path: path.join(SHOTS, 'studio-report-1280x720.png') });
    await page.close();
  }, 480_000); // the generation itself may take minutes on a busy machine (waitFor above allows 420 s)

  it('the pages raised no script errors', () => {
    expect(pageErrors).toEqual([]);
  });
});
