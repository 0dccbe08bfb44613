/**
 * `dub models fetch|verify` against a local HTTP server serving a good file, a truncated one (the
 * connection drops mid-body), a corrupted one and one that needs resuming, with a manifest of
 * its own (DUB_MODELS_MANIFEST) and a models dir in a temp folder.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const DUB = fileURLToPath(new URL('../bin/dub.js', import.meta.url));
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

describe('dub models fetch and verify', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-models-fetch-'));
  const good = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 7919) % 251));
  const other = Buffer.from(Array.from({ length: 200_000 }, (_, i) => (i * 31) % 253));
  let server: http.Server;
  let base = '';
  let truncate = true;
  const ranges: string[] = [];
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const name = (req.url ?? '').slice(1);
      if (req.headers.range) ranges.push(`${name} ${req.headers.range}`);
      if (name === 'good.onnx' || name === 'unpinned.onnx') return void res.writeHead(200, { 'content-length': good.length }).end(good);
      if (name === 'corrupt.onnx') {
        const bad = Buffer.from(good);
        bad[1000] ^= 0xff;
        return void res.writeHead(200, { 'content-length': bad.length }).end(bad);
      }
      if (name === 'flaky.onnx') {
        const m = /bytes=(\d+)-/.exec(String(req.headers.range ?? ''));
        const from = m ? Number(m[1]) : 0;
        if (truncate && from === 0) {
          // announces the whole file, sends 100 kB, then drops the connection
          res.writeHead(200, { 'content-length': other.length });
          res.write(other.subarray(0, 100_000), () => setTimeout(() => res.destroy(), 1000));
          return;
        }
        const body = other.subarray(from);
        return void res.writeHead(from ? 206 : 200, { 'content-length': body.length, ...(from ? { 'content-range': `bytes ${from}-${other.length - 1}/${other.length}` } : {}) }).end(body);
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const manifest = {
      models: [
        { id: 'm-good', description: 't', license: 't', source: 't', files: [{ name: 'good.onnx', url: `${base}/good.onnx`, size: good.length, sha256: sha(good) }] },
        { id: 'm-corrupt', description: 't', license: 't', source: 't', files: [{ name: 'c.onnx', url: `${base}/corrupt.onnx`, size: good.length, sha256: sha(good) }] },
        { id: 'm-flaky', description: 't', license: 't', source: 't', files: [{ name: 'f.onnx', url: `${base}/flaky.onnx`, size: other.length, sha256: sha(other) }] },
        { id: 'm-unpinned', description: 't', license: 't', source: 't', files: [{ name: 'u.onnx', url: `${base}/unpinned.onnx`, pin: 'first-fetch' }] },
        { id: 'm-nohash', description: 't', license: 't', source: 't', files: [{ name: 'n.onnx', url: `${base}/good.onnx` }] },
        // md5 and size published (as Piper's voices.json does), no sha256: first-fetch records the sha256
        { id: 'm-md5', description: 't', license: 't', source: 't', files: [{ name: 'p.onnx', url: `${base}/good.onnx`, size: good.length, md5: md5(good), pin: 'first-fetch' }] },
        { id: 'm-md5-bad', description: 't', license: 't', source: 't', files: [{ name: 'q.onnx', url: `${base}/corrupt.onnx`, size: good.length, md5: md5(good), pin: 'first-fetch' }] },
        { id: 'm-md5-short', description: 't', license: 't', source: 't', files: [{ name: 's.onnx', url: `${base}/good.onnx`, size: good.length + 1, md5: md5(good), pin: 'first-fetch' }] },
        // a CRC-32 published as FaceFusion's .hash files give it (python: format(zlib.crc32(good), '08x') = e06390e4), no sha256
        { id: 'm-crc', description: 't', license: 't', source: 't', files: [{ name: 'r.onnx', url: `${base}/good.onnx`, crc32: 'e06390e4', pin: 'first-fetch' }] },
        { id: 'm-crc-bad', description: 't', license: 't', source: 't', files: [{ name: 'k.onnx', url: `${base}/corrupt.onnx`, crc32: 'e06390e4', pin: 'first-fetch' }] },
      ],
    };
    fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifest));
  });
  afterAll(async () => {
    await new Promise<void>((r) => server.close(() => r()));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const models = () => path.join(dir, 'models');
  const dub = (args: string[]) =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const p = spawn(process.execPath, [DUB, 'models', ...args], { env: { ...process.env, DUB_MODELS_MANIFEST: path.join(dir, 'manifest.json'), DUB_MODELS_DIR: models() } });
      let stdout = '';
      let stderr = '';
      p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      p.on('error', reject);
      p.on('close', (status) => resolve({ status, stdout, stderr }));
    });

  it('a good file is fetched, checked and placed', async () => {
    const r = await dub(['fetch', 'm-good']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/m-good\/good\.onnx: fetched to .*, sha256 verified/);
    // progress on stderr (not a terminal: a line at each quarter reached), ending at the whole file
    expect(r.stderr).toContain('m-good/good.onnx: 0.3 MiB of 0.3 MiB (100%)\n');
    expect(fs.readFileSync(path.join(models(), 'm-good', 'good.onnx')).equals(good)).toBe(true);
  });

  it('a corrupted file is discarded: nothing is left where the resolver loads from', async () => {
    const r = await dub(['fetch', 'm-corrupt']);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/m-corrupt\/c\.onnx: fetch failed .*sha256 [0-9a-f]{64}, expected [0-9a-f]{64} \(the download was discarded\)/);
    expect(fs.existsSync(path.join(models(), 'm-corrupt', 'c.onnx'))).toBe(false);
    expect(fs.existsSync(path.join(models(), 'm-corrupt', 'c.onnx.part'))).toBe(false);
  });

  it('a download cut short is kept as .part, never placed, and the next fetch resumes it with a Range request', async () => {
    const first = await dub(['fetch', 'm-flaky']);
    expect(first.status).toBe(1);
    expect(fs.existsSync(path.join(models(), 'm-flaky', 'f.onnx'))).toBe(false);
    const kept = fs.statSync(path.join(models(), 'm-flaky', 'f.onnx.part')).size;
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThanOrEqual(100_000);
    truncate = false;
    const second = await dub(['fetch', 'm-flaky']);
    expect(second.status, second.stderr).toBe(0);
    expect(second.stdout).toContain(`resumed at ${kept} bytes`);
    expect(ranges).toContain(`flaky.onnx bytes=${kept}-`);
    expect(fs.readFileSync(path.join(models(), 'm-flaky', 'f.onnx')).equals(other)).toBe(true);
  });

  it('a file without a published hash: fetched only when marked first-fetch, which records it in the lock file', async () => {
    const nohash = await dub(['fetch', 'm-nohash']);
    expect(nohash.status).toBe(1);
    expect(nohash.stderr).toMatch(/no sha256 .*not fetched/);
    const r = await dub(['fetch', 'm-unpinned']);
    expect(r.status, r.stderr).toBe(0);
    const lock = JSON.parse(fs.readFileSync(path.join(models(), 'models.lock.json'), 'utf8')) as Record<string, { sha256: string; size: number }>;
    expect(lock['m-unpinned/u.onnx']).toMatchObject({ sha256: sha(good), size: good.length });
  });

  it('verify: checks against the manifest or the lock, reports unverified files, and --strict fails on them', async () => {
    // m-nohash placed by hand: present, but nothing to check it against
    fs.mkdirSync(path.join(models(), 'm-nohash'), { recursive: true });
    fs.writeFileSync(path.join(models(), 'm-nohash', 'n.onnx'), good);
    const ok = await dub(['verify', 'm-good', 'm-unpinned', 'm-nohash', '--json']);
    expect(ok.status).toBe(0);
    const rows = JSON.parse(ok.stdout) as { model: string; state: string }[];
    expect(Object.fromEntries(rows.map((r) => [r.model, r.state]))).toEqual({ 'm-good': 'ok', 'm-unpinned': 'ok', 'm-nohash': 'unverified' });
    expect((await dub(['verify', 'm-good', 'm-nohash', '--strict'])).status).toBe(1);
    // a file changed after its fetch no longer verifies
    fs.appendFileSync(path.join(models(), 'm-unpinned', 'u.onnx'), 'x');
    const changed = await dub(['verify', 'm-unpinned']);
    expect(changed.status).toBe(1);
    expect(changed.stdout).toMatch(/MISMATCH/);
  });

  it('a published md5 and size are checked: a corrupted or wrong-sized download is discarded and nothing is locked; a good one records its sha256', async () => {
    const bad = await dub(['fetch', 'm-md5-bad']);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/m-md5-bad\/q\.onnx: fetch failed .*md5 [0-9a-f]{32}, expected [0-9a-f]{32} \(the download was discarded\)/);
    expect(fs.existsSync(path.join(models(), 'm-md5-bad', 'q.onnx'))).toBe(false);
    expect(fs.existsSync(path.join(models(), 'm-md5-bad', 'q.onnx.part'))).toBe(false);
    const short = await dub(['fetch', 'm-md5-short']);
    expect(short.status).toBe(1);
    expect(short.stderr).toMatch(/size 300000 bytes, expected 300001/);
    expect(fs.existsSync(path.join(models(), 'm-md5-short', 's.onnx'))).toBe(false);
    const lockFile = path.join(models(), 'models.lock.json');
    const before = fs.existsSync(lockFile) ? (JSON.parse(fs.readFileSync(lockFile, 'utf8')) as Record<string, unknown>) : {};
    expect(before['m-md5-bad/q.onnx']).toBeUndefined();
    const ok = await dub(['fetch', 'm-md5']);
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/m-md5\/p\.onnx: fetched to .*, size and published md5 verified, first fetch: sha256 [0-9a-f]{64} recorded/);
    const lock = JSON.parse(fs.readFileSync(lockFile, 'utf8')) as Record<string, { sha256: string; size: number }>;
    expect(lock['m-md5/p.onnx']).toMatchObject({ sha256: sha(good), size: good.length });
    // verify checks md5, size and the locked sha256; a file replaced by other bytes of the same size fails on md5
    expect((await dub(['verify', 'm-md5'])).status).toBe(0);
    fs.mkdirSync(path.join(models(), 'm-md5-bad'), { recursive: true });
    const swapped = Buffer.from(good);
    swapped[5] ^= 0x01;
    fs.writeFileSync(path.join(models(), 'm-md5-bad', 'q.onnx'), swapped);
    const v = await dub(['verify', 'm-md5-bad', '--json']);
    expect(v.status).toBe(1);
    expect(JSON.parse(v.stdout)).toEqual([expect.objectContaining({ model: 'm-md5-bad', state: 'mismatch', detail: expect.stringMatching(/^md5 [0-9a-f]{32}, expected /), sha256_ok: false })]);
    fs.writeFileSync(path.join(models(), 'm-md5-bad', 'q.onnx'), good);
    const v2 = await dub(['verify', 'm-md5-bad', '--json']);
    expect(v2.status).toBe(0);
    expect(JSON.parse(v2.stdout)).toEqual([expect.objectContaining({ state: 'ok', sha256_ok: null, detail: '(published md5 and size; no sha256 yet)' })]);
  });

  it('a published CRC-32 is checked: a corrupted download is discarded and nothing is locked; a good one records its sha256', async () => {
    const bad = await dub(['fetch', 'm-crc-bad']);
    expect(bad.status).toBe(1);
    // the corrupted bytes' CRC-32 (python zlib: 7bb88d67) against the published one
    expect(bad.stderr).toContain('m-crc-bad/k.onnx: fetch failed');
    expect(bad.stderr).toContain('crc32 7bb88d67, expected e06390e4 (the download was discarded)');
    expect(fs.existsSync(path.join(models(), 'm-crc-bad', 'k.onnx'))).toBe(false);
    expect(fs.existsSync(path.join(models(), 'm-crc-bad', 'k.onnx.part'))).toBe(false);
    const lockFile = path.join(models(), 'models.lock.json');
    const before = fs.existsSync(lockFile) ? (JSON.parse(fs.readFileSync(lockFile, 'utf8')) as Record<string, unknown>) : {};
    expect(before['m-crc-bad/k.onnx']).toBeUndefined();
    const ok = await dub(['fetch', 'm-crc']);
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/m-crc\/r\.onnx: fetched to .*, size and published crc32 verified, first fetch: sha256 [0-9a-f]{64} recorded/);
    expect((JSON.parse(fs.readFileSync(lockFile, 'utf8')) as Record<string, unknown>)['m-crc/r.onnx']).toMatchObject({ sha256: sha(good), size: good.length });
    // verify: a file of the same size with one byte changed fails on the CRC-32 (and the sha256 locked by the first fetch)
    fs.mkdirSync(path.join(models(), 'm-crc-bad'), { recursive: true });
    const swapped = Buffer.from(good);
    swapped[1000] ^= 0xff;
    fs.writeFileSync(path.join(models(), 'm-crc-bad', 'k.onnx'), swapped);
    const v = await dub(['verify', 'm-crc-bad', '--json']);
    expect(v.status).toBe(1);
    expect(JSON.parse(v.stdout)).toEqual([expect.objectContaining({ model: 'm-crc-bad', state: 'mismatch', detail: 'crc32 7bb88d67, expected e06390e4', sha256_ok: false })]);
    fs.writeFileSync(path.join(models(), 'm-crc-bad', 'k.onnx'), good);
    const v2 = await dub(['verify', 'm-crc-bad', '--json']);
    expect(v2.status).toBe(0);
    expect(JSON.parse(v2.stdout)).toEqual([expect.objectContaining({ state: 'ok', sha256_ok: null, detail: '(published crc32 and size; no sha256 yet)' })]);
  });
});
