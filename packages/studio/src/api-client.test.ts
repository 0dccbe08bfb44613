import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, linkCredential, StudioClient } from './api-client.js';

// A real HTTP server that records what the client sends and answers like the API does.
interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}
let server: http.Server;
let base: string;
const seen: Seen[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      const path = req.url!.split('?')[0];
      const json = (status: number, v: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(v));
      };
      if (path === '/v1/versions/ver_1/script' && req.method === 'GET') return json(200, { segments: [] }, { etag: '"ver_1-r3"' });
      if (path === '/v1/versions/ver_1/script' && req.method === 'PUT') {
        if (req.headers['if-match'] !== '"ver_1-r3"') return json(412, { detail: 'the script changed since it was read' });
        return json(200, JSON.parse(body), { etag: '"ver_1-r4"' });
      }
      if (path === '/v1/versions/ver_1/generate') return json(400, { detail: 'version ver_1 is Generating; generate is allowed only when it is ReadyToEdit' });
      if (path === '/v1/versions/ver_1/srt') {
        res.writeHead(200, { 'content-type': 'application/x-subrip', 'content-disposition': 'attachment; filename="ver_1-target.srt"' });
        return res.end('1\n00:00:00,500 --> 00:00:03,200\nHola\n');
      }
      if (path === '/v1/versions/ver_1/segments/s%201/redub' || path === '/v1/versions/ver_1/speakers/S1/preview') {
        if (body.includes('"text":""')) return json(400, { detail: 'text: the text to speak is empty' });
        res.writeHead(200, { 'content-type': 'audio/wav', 'x-dub-regenerated': 'true', 'x-dub-start': '1.500', 'x-dub-end': '3.250', 'x-dub-duration': '1.750', 'x-dub-voice-source': 'library:ana', 'x-dub-tts-engine': 'espeak-ng' });
        return res.end(Buffer.from('RIFF....WAVE'));
      }
      if (path === '/v1/versions/ver_1/revise') {
        res.writeHead(502, { 'content-type': 'text/html' });
        return res.end('<h1>Bad gateway</h1>');
      }
      json(404, { detail: `no route ${req.method} ${path}` });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('linkCredential', () => {
  it('reads expires and sig from a page query, or nothing', () => {
    expect(linkCredential('?expires=1700000000&sig=abc-_')).toEqual({ kind: 'link', expires: '1700000000', sig: 'abc-_' });
    expect(linkCredential('?expires=1')).toBeUndefined();
    expect(linkCredential('')).toBeUndefined();
  });
});

describe('StudioClient', () => {
  it('a link client puts the signature on every call and sends no Authorization', async () => {
    const c = new StudioClient({ apiBase: base, versionId: 'ver_1', credential: { kind: 'link', expires: '99', sig: 's/g+' } });
    seen.length = 0;
    const s = await c.script();
    expect(s.etag).toBe('"ver_1-r3"');
    const srt = await c.srt('target', 'mobile');
    expect(srt).toEqual({ text: '1\n00:00:00,500 --> 00:00:03,200\nHola\n', filename: 'ver_1-target-mobile.srt' });
    expect(seen.map((x) => x.url)).toEqual(['/v1/versions/ver_1/script?expires=99&sig=s%2Fg%2B', '/v1/versions/ver_1/srt?locality=target&srt_profile=mobile&expires=99&sig=s%2Fg%2B']);
    expect(seen.every((x) => x.headers.authorization === undefined)).toBe(true);
  });

  it('a key client sends Authorization: Bearer and never the key in a URL', async () => {
    const c = new StudioClient({ apiBase: base, versionId: 'ver_1', credential: { kind: 'key', key: 'secret-key' } });
    seen.length = 0;
    await c.script();
    expect(seen[0]!.url).toBe('/v1/versions/ver_1/script');
    expect(seen[0]!.headers.authorization).toBe('Bearer secret-key');
  });

  it('save sends the whole script with If-Match; a stale ETag is a 412 ApiError', async () => {
    const c = new StudioClient({ apiBase: base, versionId: 'ver_1', credential: { kind: 'key', key: 'k' } });
    seen.length = 0;
    const script = { v: 1, segments: [{ id: 's1', target_text: 'hola' }] } as never;
    const saved = await c.saveScript(script, '"ver_1-r3"');
    expect(saved.etag).toBe('"ver_1-r4"');
    expect(seen[0]).toMatchObject({ method: 'PUT', headers: { 'if-match': '"ver_1-r3"', 'content-type': 'application/json' } });
    expect(JSON.parse(seen[0]!.body)).toEqual(script);
    const err = await c.saveScript(script, '"ver_1-r2"').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 412, detail: 'the script changed since it was read' });
  });

  it('errors carry the API detail; a non-JSON error and an unreachable API still say something useful', async () => {
    const c = new StudioClient({ apiBase: base, versionId: 'ver_1', credential: { kind: 'key', key: 'k' } });
    await expect(c.generate('no_lips')).rejects.toMatchObject({ status: 400, detail: expect.stringMatching(/allowed only when it is ReadyToEdit/) });
    await expect(c.revise()).rejects.toMatchObject({ status: 502, detail: '502 <h1>Bad gateway</h1>' });
    const gone = new StudioClient({ apiBase: 'http://127.0.0.1:9', versionId: 'ver_1', credential: { kind: 'key', key: 'k' } });
    await expect(gone.version()).rejects.toMatchObject({ status: 0, detail: expect.stringMatching(/could not be reached/) });
  });

  it('redub and previewVoice post the line or the choice and return the WAV with what the API said; errors carry the detail', async () => {
    const c = new StudioClient({ apiBase: base, versionId: 'ver_1', credential: { kind: 'link', expires: '99', sig: 'sg' } });
    seen.length = 0;
    const line = await c.redub('s 1', { text: 'Hola', speaker: 'S1' });
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/v1/versions/ver_1/segments/s%201/redub?expires=99&sig=sg' });
    expect(JSON.parse(seen[0]!.body)).toEqual({ text: 'Hola', speaker: 'S1' });
    expect(line).toMatchObject({ duration: 1.75, regenerated: true, start: 1.5, end: 3.25, voiceSource: 'library:ana', engine: 'espeak-ng' });
    expect(line.wav.type).toBe('audio/wav');
    expect(Buffer.from(await line.wav.arrayBuffer()).toString()).toBe('RIFF....WAVE');
    const p = await c.previewVoice('S1', { source: 'library', library_voice_id: 'ana' });
    expect(JSON.parse(seen[1]!.body)).toEqual({ voice: { source: 'library', library_voice_id: 'ana' } });
    expect(p.voiceSource).toBe('library:ana');
    await c.previewVoice('S1', null);
    expect(JSON.parse(seen[2]!.body)).toEqual({ voice: null });
    await expect(c.redub('s 1', { text: '' })).rejects.toMatchObject({ status: 400, detail: 'text: the text to speak is empty' });
  });
});
