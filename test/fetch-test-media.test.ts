/**
 * scripts/fetch-test-media.sh against a local HTTP mirror: good files are placed and verified,
 * a corrupted or truncated download is discarded (never placed where the tests look), a file the
 * mirror lacks is reported, and a second run finds the placed files verified without downloading.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithMedia, media, REPO_ROOT } from './support/media.js';

const SCRIPT = path.join(REPO_ROOT, 'scripts', 'fetch-test-media.sh');
const ALL = ['jfk.wav', 'two-speakers-call.wav', 'two-speakers-call.rttm', 'two-speakers-call.stm', 'voice-ref-a.mp3', 'voice-ref-b.mp3', 'chinese-news.wav', 'japanese.wav', 'talking-head-480.mp4', 'talking-head-vertical.mp4', 'spanish-prompt.wav', 'music-coffee.wav'];

describeWithMedia(ALL, 'fetch-test-media.sh from a mirror', () => {
  let server: http.Server;
  let base: string;
  let dest: string;
  const requests: string[] = [];
  beforeAll(async () => {
    dest = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-fetch-media-'));
    // Serves the real recordings by name; japanese.wav with one byte flipped, chinese-news.wav cut short, no spanish-prompt.wav.
    server = http.createServer((req, res) => {
      const name = decodeURIComponent((req.url ?? '/').slice(1));
      requests.push(name);
      if (!ALL.includes(name) || name === 'spanish-prompt.wav') return void res.writeHead(404).end();
      let body = fs.readFileSync(media(name));
      if (name === 'japanese.wav') body[body.length >> 1] ^= 0xff;
      if (name === 'chinese-news.wav') body = body.subarray(0, body.length - 1000);
      res.writeHead(200, { 'content-length': body.length }).end(body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((r) => server.close(() => r()));
    fs.rmSync(dest, { recursive: true, force: true });
  });

  // Asynchronous: the mirror answers from this process.
  const run = () =>
    new Promise<{ status: number | null; stdout: string }>((resolve, reject) => {
      const p = spawn('bash', [SCRIPT], { env: { ...process.env, DUB_TEST_MEDIA: dest, DUB_TEST_MEDIA_MIRROR: base, DUB_TEST_MEDIA_ORIGINS: '0' } });
      let stdout = '';
      p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      p.on('error', reject);
      p.on('close', (status) => resolve({ status, stdout }));
    });

  it('places verified files, discards corrupted and truncated ones, reports the missing one, exits 1', async () => {
    const r = await run();
    expect(r.status).toBe(1);
    for (const name of ALL.filter((n) => !['japanese.wav', 'chinese-news.wav', 'spanish-prompt.wav'].includes(n))) {
      expect(fs.readFileSync(path.join(dest, name)).equals(fs.readFileSync(media(name))), name).toBe(true);
    }
    for (const name of ['japanese.wav', 'chinese-news.wav', 'spanish-prompt.wav']) expect(fs.existsSync(path.join(dest, name)), name).toBe(false);
    expect(fs.readdirSync(dest).filter((f) => !ALL.includes(f))).toEqual([]); // no partial files left
    expect(r.stdout).toMatch(/japanese\.wav: .*sha256 [0-9a-f]{64}, expected 3db5426d.*discarded/);
    expect(r.stdout).toMatch(/chinese-news\.wav: .*discarded/);
    expect(r.stdout).toMatch(/spanish-prompt\.wav: .*download failed/);
    expect(r.stdout.trim().split('\n').at(-1)).toBe(`9 in place in ${dest}; 3 failed: chinese-news.wav japanese.wav spanish-prompt.wav; 0 need a mirror`);
  });

  it('a second run verifies what is in place without downloading it again', async () => {
    requests.length = 0;
    const r = await run();
    expect(r.stdout).toMatch(/jfk\.wav: present, verified/);
    expect(requests.sort()).toEqual(['chinese-news.wav', 'japanese.wav', 'spanish-prompt.wav']);
  });
});
