/**
 * A glossary end to end through the HTTP API (issue 23 item 5): `dub serve` with the embedded
 * defaults gets a few seconds of espeak-ng speech as an upload whose request carries a glossary
 * (and the line as its source_srt: Whisper hears espeak-ng's "dubbing" as "nothing", and a glossary
 * applies to the words of the transcript); the real pipeline prepares it and translates it
 * (apertium en -> es), the version's script keeps
 * the brand and writes the fixed translation, each line records the terms it carries, and the
 * quality report of a generation says the same per line.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { VersionScript } from '@dub/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, spawnDub, waitFor, waitHealthy, type DubProcess } from './e2e-helpers.js';
import { spokenWav, videoFromWav } from './prepare-helpers.js';

const KEY = 'e2e-glossary-key';
const auth = { authorization: `Bearer ${KEY}` };
const GLOSSARY = [
  { term: 'Blue Bird', keep: true },
  { term: 'dubbing', translation: 'doblaje' },
];

describe('a glossary through dub serve', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-e2e-glossary-'));
  let server: DubProcess;
  let base = '';

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    server = spawnDub(['serve', '--port', String(port), '--host', '127.0.0.1', '--data-dir', path.join(dir, 'data')], { DUB_API_KEYS: `${KEY}:org1`, DUB_ALLOW_PRIVATE_URLS: '1', DUB_TTS_ENGINE: 'espeak-ng' });
    await waitHealthy(base, server);
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the script keeps "Blue Bird" and says "doblaje"; lines and the report name the terms', async () => {
    const wav = spokenWav('Welcome to Blue Bird. We make dubbing simple.', path.join(dir, 'speech.wav'));
    const video = videoFromWav(wav, path.join(dir, 'speech.mp4'));
    const form = new FormData();
    const sourceSrt = '1\n00:00:00,100 --> 00:00:03,000\nWelcome to Blue Bird. We make dubbing simple.\n';
    form.set('request', JSON.stringify({ name: 'glossary e2e', locale: 'en-US', languages: [{ locale: 'es-ES' }], speakers_count: 1, source_srt: sourceSrt, glossary: GLOSSARY }));
    form.set('video', new Blob([fs.readFileSync(video)], { type: 'video/mp4' }), 'speech.mp4');
    const created = await fetch(`${base}/v1/assets/upload`, { method: 'POST', headers: auth, body: form });
    expect(created.status, server.log()).toBe(201);
    const asset = (await created.json()) as { asset_id: string; glossary: unknown; languages: { versions: { version_id: string }[] }[] };
    expect(asset.glossary).toEqual(GLOSSARY);
    const versionId = asset.languages[0]!.versions[0]!.version_id;
    const getVersion = async () => (await (await fetch(`${base}/v1/versions/${versionId}`, { headers: auth })).json()) as { status: string; error?: unknown };
    await waitFor('ReadyToEdit', async () => {
      const v = await getVersion();
      if (v.status === 'Failed') throw new Error(`version failed: ${JSON.stringify(v.error)}\n${server.log()}`);
      return v.status === 'ReadyToEdit' ? v : undefined;
    }, 240_000);

    const script = (await (await fetch(`${base}/v1/versions/${versionId}/script`, { headers: auth })).json()) as VersionScript;
    const source = script.segments.map((s) => s.source_text).join(' ');
    const target = script.segments.map((s) => s.target_text).join(' ');
    expect(source, 'the transcript').toMatch(/blue bird/i);
    expect(source).toMatch(/dubbing/i);
    expect(target).toMatch(/blue bird/i);
    expect(target).toContain('doblaje');
    // apertium alone: "Bienvenido a Pájaro Azul. Hacemos bautizar sencillos."
    expect(target).not.toMatch(/pájaro|bautizar|zxq/i);
    const terms = script.segments.flatMap((s) => s.glossary ?? []);
    expect(terms.map((t) => [t.term, t.applied])).toEqual([
      ['Blue Bird', true],
      ['dubbing', true],
    ]);

    const gen = await fetch(`${base}/v1/versions/${versionId}/generate`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ generate_mode: 'no_lips' }) });
    expect(gen.status).toBe(202);
    await waitFor('Completed', async () => {
      const v = await getVersion();
      if (v.status === 'Failed') throw new Error(`generation failed: ${JSON.stringify(v.error)}\n${server.log()}`);
      return v.status === 'Completed' ? v : undefined;
    }, 240_000);
    const report = (await (await fetch(`${base}/v1/versions/${versionId}/report`, { headers: auth })).json()) as { segments: { glossary?: { term: string; applied: boolean }[] }[] };
    expect(report.segments.flatMap((s) => s.glossary ?? []).map((t) => [t.term, t.applied])).toEqual([
      ['Blue Bird', true],
      ['dubbing', true],
    ]);
  }, 600_000);
});
