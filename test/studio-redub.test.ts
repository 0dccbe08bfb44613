/**
 * Re-dub one line and voices per speaker in the studio, in headless Chromium, on a real recording
 * prepared by the real pipeline (`dub serve`: embedded queue and worker; separation, VAD, ASR,
 * speakers and translation really run), opened through the signed studio link:
 *
 * - Re-dub of an edited line (unsaved) plays the line the API synthesized for the new text (it
 *   decodes in the page; less speech than the old text's line) and synthesized nothing else;
 *   after saving that edit and another one that is not re-dubbed, the next generation's report
 *   shows the re-dubbed line taken from the cache (regenerated: false, its new text spoken) and
 *   only the other edited line synthesized anew.
 * - A speaker's voice set to a library voice (previewed first), a speaker renamed and a segment
 *   moved to the other speaker persist through Save and a reload, and the next generation speaks
 *   that speaker with the library voice (the report's speakers and regenerated lines say so).
 *
 * Needs Chromium (/usr/bin/chromium or DUB_CHROMIUM_PATH) and the real recording; skipped,
 * visibly, without either.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { VersionScript } from '@dub/core';
import { decodeWav } from '@dub/media';
import { speechExtent } from '@dub/voice';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort, spawnDub, waitFor, waitHealthy, type DubProcess } from './e2e-helpers.js';
import { videoFromWav } from './prepare-helpers.js';
import { describeWithMedia, media } from './support/media.js';

const CHROMIUM = process.env.DUB_CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--autoplay-policy=no-user-gesture-required'];
const SHOTS = process.env.DUB_STUDIO_SCREENSHOTS ?? path.join(os.tmpdir(), 'dub-studio-screenshots');
const RECORDING = 'two-speakers-call.wav';
const KEY = 'studio-redub-key';
const auth = { authorization: `Bearer ${KEY}` };
const poll = <T>(fn: () => Promise<T>, timeout = 20_000) => expect.poll(fn, { timeout, interval: 100 });

interface ReportLine {
  id: string;
  speaker: string;
  regenerated: boolean;
  resolution: string;
  text: string;
  spoken_text: string;
  placed: { start: number; end: number };
  articulation?: { pace?: number };
}
interface Report {
  segments: ReportLine[];
  speakers: { found: { id: string; voice: string }[] };
}

const describeStudio = fs.existsSync(CHROMIUM)
  ? (title: string, body: () => void) => describeWithMedia([RECORDING], title, body)
  : (title: string) => describeWithMedia([], title, () => it.skip(`Chromium is not installed at ${CHROMIUM} (apt-get install chromium): the studio re-dub test is skipped`, () => undefined));

describeStudio('studio: re-dub one line and voices per speaker on a real recording', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-studio-redub-'));
  let server: DubProcess;
  let base = '';
  let browser: Browser;
  let versionId = '';
  let link = '';
  let first: Report;
  /** The report of the last generation (revise removes it from the API afterwards). */
  let latest: Report;
  const pageErrors: string[] = [];

  const api = async (method: string, url: string, body?: unknown) => {
    const r = await fetch(`${base}${url}`, { method, headers: { ...auth, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    const buf = Buffer.from(await r.arrayBuffer());
    return { status: r.status, headers: r.headers, body: buf, text: buf.toString(), json: () => JSON.parse(buf.toString()) as Record<string, unknown> };
  };
  const stored = async () => (await api('GET', `/v1/versions/${versionId}/script`)).json() as unknown as VersionScript;
  const report = async () => (await api('GET', `/v1/versions/${versionId}/report`)).json() as unknown as Report;
  /** Seconds of speech in a WAV (a re-dubbed line is padded to its placed time). */
  const speechSeconds = (wav: Uint8Array) => {
    const a = decodeWav(wav);
    const e = speechExtent(a.channels[0]!, a.sampleRate);
    return (e.end - e.start) / a.sampleRate;
  };

  async function generate(): Promise<Report> {
    const gen = await api('POST', `/v1/versions/${versionId}/generate`, { generate_mode: 'no_lips' });
    expect(gen.status, gen.text).toBe(202);
    await waitFor('Completed', async () => {
      const v = (await api('GET', `/v1/versions/${versionId}`)).json();
      if (v.status === 'Failed') throw new Error(`generation failed: ${JSON.stringify(v.error)}\n${server.log()}`);
      return v.status === 'Completed' ? v : undefined;
    }, 420_000);
    const r = await report();
    latest = r;
    const revise = await api('PATCH', `/v1/versions/${versionId}/revise`, {});
    expect(revise.status, revise.text).toBe(200);
    return r;
  }

  async function openPage(): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    page.on('pageerror', (e) => pageErrors.push(e.message));
    await page.goto(link);
    await poll(() => page.locator('#status').textContent()).toBe('ReadyToEdit');
    return page;
  }

  beforeAll(async () => {
    fs.mkdirSync(SHOTS, { recursive: true });
    const video = videoFromWav(media(RECORDING), path.join(dir, 'call.mp4'));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    // the studio's re-dub is what this tests, timed with espeak-ng's lines: chosen explicitly (auto speaks Spanish with Kokoro)
    server = spawnDub(['serve', '--port', String(port), '--host', '127.0.0.1', '--data-dir', path.join(dir, 'data')], { DUB_API_KEYS: `${KEY}:org1`, DUB_ONNX_THREADS: '2', DUB_TTS_ENGINE: 'espeak-ng' });
    await waitHealthy(base, server, 180_000);
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
    // a first generation: every line synthesized once (the cache a reviewer works against)
    first = await generate();
    expect(first.segments.every((s) => s.regenerated)).toBe(true);
  }, 900_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('Re-dub of an edited line plays the new line at once; the next generation takes it from the cache and re-synthesizes only the line edited without a re-dub', async () => {
    const script = await stored();
    // two lines of one speaker that fit their slots (a shorter text then moves no other line)
    const fits = first.segments.filter((s) => s.resolution === 'fits' && s.spoken_text.length >= 20);
    const a = fits[0]!;
    // else the script's last line: a shorter text there moves no line after it
    const last = first.segments.at(-1);
    const b = fits.find((s) => s.id !== a.id && s.speaker === a.speaker) ?? fits.find((s) => s.id !== a.id) ?? (last && last.id !== a?.id ? last : undefined)!;
    expect(a && b, JSON.stringify(first.segments.map((s) => [s.id, s.resolution, s.spoken_text.length]))).toBeTruthy();
    const na = script.segments.findIndex((s) => s.id === a.id) + 1;
    const nb = script.segments.findIndex((s) => s.id === b.id) + 1;
    // the line as generated (the saved text), straight from the API, for comparison
    const old = await api('POST', `/v1/versions/${versionId}/segments/${a.id}/redub`, {});
    expect(old.status, old.text).toBe(200);
    expect(old.headers.get('x-dub-regenerated')).toBe('false');

    const page = await openPage();
    const newText = 'Sí, claro.';
    await page.locator(`#seg-${na}-text`).fill(newText);
    expect(await page.locator('#dirty').textContent()).toBe('1 unsaved change');
    const button = page.locator(`#seg-${na}-redub`);
    expect(await button.getAttribute('aria-label')).toBe(`Re-dub segment ${na}`);
    const answered = page.waitForResponse((r) => r.url().includes(`/segments/${a.id}/redub`));
    const t0 = Date.now();
    await button.click();
    // busy while it runs: the page's buttons are disabled
    expect(await page.locator('#save').isDisabled()).toBe(true);
    const res = await answered;
    expect(res.status()).toBe(200);
    expect(res.headers()['x-dub-regenerated']).toBe('true');
    expect(res.headers()['x-dub-others-synthesized']).toBe('0');
    const wav = new Uint8Array(await res.body());
    const audio = page.locator(`#seg-${na}-redub-audio`);
    await poll(() => audio.count()).toBe(1);
    const seconds = (Date.now() - t0) / 1000;
    expect(seconds).toBeLessThan(20);
    // the page's player loads it and plays it; the browser's decoder takes the API's bytes
    const played = await audio.evaluate(async (el: HTMLAudioElement) => {
      if (el.readyState < 1) await new Promise((r) => el.addEventListener('loadedmetadata', r, { once: true }));
      return { duration: el.duration, label: el.getAttribute('aria-label') };
    });
    const decoded = await page.evaluate(async (bytes) => (await new AudioContext().decodeAudioData(new Uint8Array(bytes).buffer)).duration, [...wav]);
    expect(decoded).toBeCloseTo(played.duration, 1);
    expect(played.label).toBe(`Re-dubbed line of segment ${na}`);
    const placed = Number(res.headers()['x-dub-end']) - Number(res.headers()['x-dub-start']);
    expect(played.duration).toBeCloseTo(placed, 1);
    await poll(() => audio.evaluate((el: HTMLAudioElement) => el.currentTime > 0 || el.ended)).toBe(true);
    // the new text is a much shorter line than the old one: less speech (a line shorter than its
    // time is padded at the speaker's pace, not slowed down to fill it)
    expect(speechSeconds(wav)).toBeLessThan(0.7 * speechSeconds(new Uint8Array(old.body)));
    await poll(() => page.locator(`#seg-${na}-redub-status`).textContent()).toMatch(new RegExp(`^Segment ${na} re-dubbed in [\\d.]+ s \\(synthesized now, placed`));
    expect(await page.locator('#save').isDisabled()).toBe(false);
    expect(await button.getAttribute('aria-busy')).toBeNull();
    await page.screenshot({ path: path.join(SHOTS, 'studio-redub-1280x720.png') });

    // a second edit, not re-dubbed; then save (Ctrl+S)
    const otherText = 'Vale, hasta luego.';
    await page.locator(`#seg-${nb}-text`).fill(otherText);
    await page.locator(`#seg-${nb}-text`).press('Control+s');
    await poll(() => page.locator('#dirty').textContent()).toBe('No unsaved changes');
    await page.close();
    const saved = await stored();
    expect(saved.segments[na - 1]!.target_text).toBe(newText);

    const second = await generate();
    const line = (id: string) => second.segments.find((s) => s.id === id)!;
    expect(line(a.id)).toMatchObject({ spoken_text: newText, regenerated: false });
    expect(line(b.id)).toMatchObject({ spoken_text: otherText, regenerated: true });
    // nothing else was synthesized: every other line came from the first generation's cache
    expect(second.segments.filter((s) => s.regenerated).map((s) => s.id)).toEqual([b.id]);
  }, 600_000);

  it('a bad re-dub shows the API\u2019s error in the page', async () => {
    const page = await openPage();
    await page.locator('#seg-1-text').fill('   ');
    // a blank line cannot be re-dubbed: the button is disabled
    expect(await page.locator('#seg-1-redub').isDisabled()).toBe(true);
    await page.locator('#seg-1-text').fill('x'.repeat(2001));
    await page.locator('#seg-1-redub').click();
    await poll(() => page.locator('#error').textContent()).toMatch(/Re-dub of segment 1 failed: .*text/);
    await page.close();
  });

  it('voices per speaker: preview a library voice, rename, move a segment; Save persists it and the next generation speaks that speaker with it', async () => {
    const script = await stored();
    const prev = latest;
    const ids = [...new Set([...script.speakers.map((s) => s.id), ...script.segments.map((s) => s.speaker)])];
    expect(ids.length).toBeGreaterThanOrEqual(2);
    const page = await openPage();
    expect(await page.locator('#speakers > li').count()).toBe(ids.length);
    const k = 1;
    const target = ids[k]!;
    const other = ids[0]!;
    // the library voices come from the version's voices route (the studio link may read it)
    await poll(() => page.locator(`#speaker-${k}-voice option[value="library:ana"]`).count()).toBe(1);
    await page.locator(`#speaker-${k}-voice`).selectOption('library:ana');
    expect(await page.locator('#dirty').textContent()).toBe('1 unsaved change');
    const previewed = page.waitForResponse((r) => r.url().includes(`/speakers/${target}/preview`));
    await page.locator(`#speaker-${k}-preview`).click();
    const pres = await previewed;
    expect(pres.status()).toBe(200);
    expect(JSON.parse(pres.request().postData() ?? '{}')).toEqual({ voice: { source: 'library', library_voice_id: 'ana' } });
    await poll(() => page.locator(`#speaker-${k}-preview-audio`).count()).toBe(1);
    await poll(() => page.locator(`#speaker-${k}-voice-status`).textContent()).toMatch(/^Preview of speaker .*: library:ana voice \(espeak-ng\)/);
    const preview = await page.locator(`#speaker-${k}-preview-audio`).evaluate(async (el: HTMLAudioElement) => {
      if (el.readyState < 1) await new Promise((r) => el.addEventListener('loadedmetadata', r, { once: true }));
      return el.duration;
    });
    expect(preview).toBeGreaterThan(0.5);
    // the speaker's own voice previews too
    await page.locator(`#speaker-0-voice`).selectOption('speaker');
    await page.locator(`#speaker-0-preview`).click();
    await poll(() => page.locator(`#speaker-0-voice-status`).textContent()).toMatch(/^Preview of speaker .*: (matched|converted|timbre|default) voice/);
    await page.locator(`#speaker-0-voice`).selectOption('');
    // rename
    await page.locator(`#speaker-${k}-name`).fill('Alice');
    await page.locator(`#speaker-${k}-name`).press('Tab');
    await poll(() => page.getByRole('group', { name: `Speaker Alice (${target})`, exact: true }).count()).toBe(1);
    // move one of the other speaker's segments to this speaker
    const n = script.segments.findIndex((s) => s.speaker === other) + 1;
    await page.locator(`#seg-${n}-speaker`).selectOption(target);
    await poll(() => page.getByRole('group', { name: `Speaker Alice (${target})`, exact: true }).locator(`#block-${n}`).count()).toBe(1);
    expect(await page.locator('#dirty').textContent()).toBe('2 unsaved changes');
    await page.screenshot({ path: path.join(SHOTS, 'studio-voices-1280x720.png') });
    await page.locator('#save').click();
    await poll(() => page.locator('#dirty').textContent()).toBe('No unsaved changes');
    await page.close();

    const saved = await stored();
    expect(saved.speakers.find((s) => s.id === target)).toMatchObject({ id: target, name: 'Alice', voice: { source: 'library', library_voice_id: 'ana' } });
    expect(saved.speakers.find((s) => s.id === other)?.voice).toBeUndefined();
    expect(saved.segments[n - 1]!.speaker).toBe(target);
    // a reload shows what was saved
    const again = await openPage();
    expect(await again.inputValue(`#speaker-${k}-name`)).toBe('Alice');
    await poll(() => again.inputValue(`#speaker-${k}-voice`)).toBe('library:ana');
    expect(await again.inputValue(`#seg-${n}-speaker`)).toBe(target);
    await again.close();

    const r = await generate();
    expect(r.speakers.found.find((s) => s.id === target)?.voice).toBe('library:ana');
    expect(r.speakers.found.find((s) => s.id === other)?.voice).not.toMatch(/^library:/);
    // the speaker's lines were synthesized anew with the new voice; the other speaker's came from the cache
    // (a line of the other speaker is synthesized again only when its place moved: a neighbour in
    // the new voice took another length, e.g. a line that delayed it; or when its pace changed:
    // the segment moved away changes what that speaker's lines are paced against)
    const before = (s: Report['segments'][number]) => prev.segments.find((p) => p.id === s.id);
    const moved = (s: Report['segments'][number]) => JSON.stringify(before(s)?.placed) !== JSON.stringify(s.placed);
    const repaced = (s: Report['segments'][number]) => before(s)?.articulation?.pace !== s.articulation?.pace;
    for (const s of r.segments) expect({ id: s.id, speaker: s.speaker, regenerated: s.regenerated }).toEqual({ id: s.id, speaker: s.speaker, regenerated: s.speaker === target || (s.regenerated && (moved(s) || repaced(s))) });
    expect(r.segments.filter((s) => s.speaker !== target && !s.regenerated).length).toBeGreaterThan(0);
    expect(pageErrors).toEqual([]);
  }, 600_000);
});
