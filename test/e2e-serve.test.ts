/**
 * End to end through the shipped command: `dub serve` with the embedded defaults (PGlite, blobs
 * in the data dir, in-process queue running the real @dub/pipeline handlers in worker threads).
 * A sample video made with espeak-ng is uploaded, prepared (separation, VAD, ASR, speakers,
 * translation), generated (synthesis, fitting, mixing, mux) and downloaded through signed URLs;
 * every callback's ES256 signature is checked with the served public key.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSrt } from '@dub/srt';
import { callbackReceiver, ffprobeJson, freePort, makeSample, spawnDub, waitFor, waitHealthy, type CallbackReceiver, type DubProcess } from './e2e-helpers.js';

const KEY = 'e2e-key';
const auth = { authorization: `Bearer ${KEY}` };

describe('dub serve end to end', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-e2e-'));
  const video = path.join(dir, 'sample.mp4');
  let receiver: CallbackReceiver;
  let server: DubProcess;
  let base = '';

  beforeAll(async () => {
    makeSample(video);
    receiver = await callbackReceiver();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    server = spawnDub(['serve', '--port', String(port), '--host', '127.0.0.1', '--data-dir', path.join(dir, 'data')], { DUB_API_KEYS: `${KEY}:org1`, DUB_ALLOW_PRIVATE_URLS: '1' });
    await waitHealthy(base, server);
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    receiver?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('uploads, prepares, generates and serves the dubbed video, with signed callbacks', async () => {
    const form = new FormData();
    form.set('request', JSON.stringify({ name: 'e2e sample', locale: 'en-US', languages: [{ locale: 'es-ES' }], callback_url: receiver.url }));
    form.set('video', new Blob([fs.readFileSync(video)], { type: 'video/mp4' }), 'sample.mp4');
    const created = await fetch(`${base}/v1/assets/upload`, { method: 'POST', headers: auth, body: form });
    expect(created.status, server.log()).toBe(201);
    const asset = (await created.json()) as { asset_id: string; languages: { versions: { version_id: string }[] }[] };
    const versionId = asset.languages[0]!.versions[0]!.version_id;

    const getVersion = async () => (await (await fetch(`${base}/v1/versions/${versionId}`, { headers: auth })).json()) as Record<string, unknown>;
    const ready = await waitFor('ReadyToEdit', async () => {
      const v = await getVersion();
      if (v.status === 'Failed') throw new Error(`version failed: ${JSON.stringify(v.error)}`);
      return v.status === 'ReadyToEdit' ? v : undefined;
    }, 240_000);
    expect(ready.status).toBe('ReadyToEdit');
    const a = (await (await fetch(`${base}/v1/assets/${asset.asset_id}`, { headers: auth })).json()) as { status: string; duration: number };
    expect(a.status).toBe('Ready');
    expect(a.duration).toBeGreaterThan(10);

    const srt = await fetch(`${base}/v1/versions/${versionId}/srt?srt_profile=mobile`, { headers: auth });
    expect(srt.status).toBe(200);
    expect(srt.headers.get('content-type')).toMatch(/application\/x-subrip/);
    const cues = parseSrt(await srt.text());
    expect(cues.length).toBeGreaterThan(0);
    for (const c of cues) for (const line of c.text.split('\n')) expect([...line].length).toBeLessThanOrEqual(22);
    const source = parseSrt(await (await fetch(`${base}/v1/versions/${versionId}/srt?locality=source`, { headers: auth })).text());
    expect(source.length).toBeGreaterThan(0);
    expect(cues.map((c) => c.text).join(' ')).not.toBe(source.map((c) => c.text).join(' '));

    const before = await fetch(`${base}/v1/versions/${versionId}/report`, { headers: auth });
    expect(before.status).toBe(404);
    expect(((await before.json()) as { detail: string }).detail).toMatch(/has no quality report: it has no generated result \(status ReadyToEdit\)/);

    const gen = await fetch(`${base}/v1/versions/${versionId}/generate`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ generate_mode: 'no_lips' }) });
    expect(gen.status).toBe(202);
    const done = await waitFor('Completed', async () => {
      const v = await getVersion();
      if (v.status === 'Failed') throw new Error(`generation failed: ${JSON.stringify(v.error)}`);
      return v.status === 'Completed' ? v : undefined;
    }, 240_000);
    const resultUrl = String(done.result_url);
    // the quality report the generation stored, served by the API
    const rep = await fetch(`${base}/v1/versions/${versionId}/report`, { headers: auth });
    expect(rep.status).toBe(200);
    const report = (await rep.json()) as { schema: string; version_id: string; generation: number; target_locale: string; segments: { id: string; speed_factor: number }[]; summary: { segments: number } };
    expect(report).toMatchObject({ schema: 'dub.quality-report/1', version_id: versionId, generation: 1, target_locale: 'es-ES' });
    expect(report.segments.length).toBeGreaterThan(0);
    expect(report.summary.segments).toBe(report.segments.length);
    for (const x of report.segments) expect(x.speed_factor).toBeGreaterThan(0);
    expect(done.result_audio_url).toEqual(expect.any(String));

    const file = path.join(dir, 'result.mp4');
    const res = await fetch(resultUrl);
    expect(res.status).toBe(200);
    fs.writeFileSync(file, Buffer.from(await res.arrayBuffer()));
    const probe = ffprobeJson(file);
    expect(probe.streams.map((s) => s.codec_type).sort()).toEqual(['audio', 'video']);
    expect(Math.abs(Number(probe.format.duration) - a.duration)).toBeLessThan(0.2);
    const ranged = await fetch(resultUrl, { headers: { range: 'bytes=0-99' } });
    expect(ranged.status).toBe(206);
    expect((await ranged.arrayBuffer()).byteLength).toBe(100);
    expect((await fetch(`${resultUrl}0`)).status).toBe(403);

    // Callbacks: each one signed (ES256, DER, hex) over the raw body.
    const pem = await (await fetch(`${base}/v1/callbacks/public-key`)).text();
    const events = await waitFor('the version_generated callback', async () => {
      const evs = receiver.received.map((c) => JSON.parse(c.body) as { event: string });
      return evs.some((e) => e.event === 'version_generated') ? evs : undefined;
    }, 60_000);
    expect(events.map((e) => e.event)).toEqual(expect.arrayContaining(['version_ready', 'version_generating', 'version_generated']));
    for (const c of receiver.received) expect(crypto.verify('sha256', Buffer.from(c.body), pem, Buffer.from(c.signature, 'hex'))).toBe(true);

    // Revise removes the generated video: the old signed URL stops working.
    const revised = await fetch(`${base}/v1/versions/${versionId}/revise`, { method: 'PATCH', headers: { ...auth, 'content-type': 'application/json' }, body: '{}' });
    expect(revised.status).toBe(200);
    expect((await getVersion()).status).toBe('ReadyToEdit');
    expect([404, 410]).toContain((await fetch(resultUrl)).status);
  }, 600_000);
});
