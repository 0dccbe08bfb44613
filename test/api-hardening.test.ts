/**
 * Nothing a client sends takes the service down: each class of hostile or broken input found by an
 * attack run answers a 4xx with the contract's `{detail}` body, and the process keeps answering.
 * What fastify.inject cannot send (cut-short bodies, dropped connections, a missing Host, a bogus
 * Expect, malformed request lines) goes over raw sockets to a listening server; the crash cases
 * run the API in a child process so that a crash is seen as its exit.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBody, prepareAsset, sampleScript, startTestApi, tmpDir, type TestApi } from './api-helpers.js';
import { startApiProcess, type ApiProcess } from './support/api-process.js';
import { message, multipartBody, rawRequest, type RawResponse } from './support/raw-http.js';

const KEY = 'key-one';
const AUTH = { authorization: `Bearer ${KEY}` };
const request = { name: 'Upload', locale: 'en-US', languages: [{ locale: 'fr-FR' }] };
const REQUEST_ID = /^req_[0-9a-f]{16}$/;

/** A 4xx answer with the contract's body: a JSON object whose detail is a non-empty string. */
function expectDetail(r: RawResponse | undefined, status: number, detail?: RegExp): string {
  expect(r, 'no response').toBeDefined();
  expect(r!.status, r!.body).toBe(status);
  expect(r!.headers['content-type']).toMatch(/^application\/json/);
  const body = r!.json();
  expect(typeof body.detail).toBe('string');
  expect((body.detail as string).length).toBeGreaterThan(0);
  if (detail) expect(body.detail).toMatch(detail);
  return body.detail as string;
}

/**
 * The files under `dir` now. The server may be removing them meanwhile: a file gone between the
 * listing and its stat is not there, and a folder gone during the listing lists again.
 */
function filesUnder(dir: string): string[] {
  for (let attempt = 0; ; attempt++) {
    if (!fs.existsSync(dir)) return [];
    try {
      return fs.readdirSync(dir, { recursive: true }).map(String).filter((f) => fs.statSync(path.join(dir, f), { throwIfNoEntry: false })?.isFile() ?? false);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 20) throw e;
    }
  }
}

async function eventually(fn: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!fn() && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
}

/** The start of an upload whose video part is still arriving (no closing boundary). */
function cutUpload(boundary: string, videoBytes = 200_000): Buffer {
  return Buffer.concat([
    multipartBody(boundary, [{ name: 'request', value: JSON.stringify(request) }], false),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="video"; filename="in.mp4"\r\nContent-Type: video/mp4\r\n\r\n`),
    Buffer.alloc(videoBytes, 7),
  ]);
}

describe('an API process survives dropped and cut-short uploads and answers {detail} below fastify', () => {
  const dataDir = tmpDir('dub-harden-proc-');
  let p: ApiProcess;
  beforeAll(async () => {
    p = await startApiProcess(dataDir, { DUB_API_KEYS: `${KEY}:org1`, DUB_ALLOW_PRIVATE_URLS: '1' });
  });
  afterAll(async () => {
    await p?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const healthy = async () => {
    const r = await rawRequest(p.port, message('GET', '/healthz'));
    expect(p.alive(), p.log()).toBe(true);
    expect(r?.status, p.log()).toBe(200);
  };

  it('a body that ends inside the video part, the client gone at once (half-closed or dropped): the process lives, nothing is kept', async () => {
    // The crash was a race (the part failed while the blob store was still creating its
    // directory): several sizes, each with the client half-closing and with it dropping.
    for (const size of [100, 5_000, 100_000, 1_000_000]) {
      for (const how of [{ end: true }, { destroy: true }]) {
        const body = cutUpload('dubcut', size);
        const headers = { ...AUTH, 'content-type': 'multipart/form-data; boundary=dubcut', 'content-length': String(body.length + 1_000_000) };
        await rawRequest(p.port, message('POST', '/v1/assets/upload', { headers, body }), how);
        await healthy();
      }
    }
    // The client does not wait for the server: the last uploads may still be starting to be
    // stored after the loop. Nothing may stay: the folder must be empty and stay empty for 1 s.
    let emptySince = 0;
    await eventually(() => {
      if (filesUnder(path.join(dataDir, 'blobs', 'assets')).length > 0) emptySince = 0;
      else emptySince ||= Date.now();
      return emptySince > 0 && Date.now() - emptySince >= 1000;
    }, 20_000);
    expect(filesUnder(path.join(dataDir, 'blobs', 'assets'))).toEqual([]);
  });

  it('a chunked body that ends inside the video part: 400 naming the part, the process lives', async () => {
    const body = cutUpload('dubcut', 50_000);
    const chunked = Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')]);
    const r = await rawRequest(p.port, message('POST', '/v1/assets/upload', { headers: { ...AUTH, 'content-type': 'multipart/form-data; boundary=dubcut', 'transfer-encoding': 'chunked' }, body: chunked }));
    expectDetail(r, 400, /^video: the upload ended inside this part/);
    await healthy();
  });

  it('a body that ends inside a small part after a large one (no closing boundary): 400 naming the part, nothing kept', async () => {
    // The small part is cut short while the large one is still being stored: it arrives already
    // destroyed, and reading it must fail at once instead of waiting forever.
    const body = multipartBody(
      'dubcut',
      [
        { name: 'request', value: JSON.stringify(request) },
        { name: 'video', filename: 'in.mp4', type: 'video/mp4', value: Buffer.alloc(75_000, 7) },
        { name: 'background', filename: 'bg.wav', value: Buffer.alloc(900, 1) },
      ],
      false,
    );
    const r = await rawRequest(p.port, message('POST', '/v1/assets/upload', { headers: { ...AUTH, 'content-type': 'multipart/form-data; boundary=dubcut' }, body }), { timeoutMs: 10_000 });
    expectDetail(r, 400, /^background: the upload ended inside this part/);
    await eventually(() => filesUnder(path.join(dataDir, 'blobs', 'assets')).length === 0);
    expect(filesUnder(path.join(dataDir, 'blobs', 'assets'))).toEqual([]);
    await healthy();
  });

  it('Expect other than 100-continue: 417 with {detail}', async () => {
    const r = await rawRequest(p.port, message('GET', '/healthz', { headers: { expect: 'bogus' } }));
    expectDetail(r, 417, /Expect: bogus/);
    expect(r!.headers['x-request-id']).toMatch(REQUEST_ID);
    await healthy();
  });

  it('HTTP/1.1 without Host: 400 with {detail}', async () => {
    const r = await rawRequest(p.port, message('GET', '/healthz', { host: null }));
    expectDetail(r, 400, /^Host header: required/);
    expect(r!.headers['x-request-id']).toMatch(REQUEST_ID);
  });

  it('a request Node cannot parse (bad header line, bad request line): 400 with {detail}', async () => {
    expectDetail(await rawRequest(p.port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nthis is not a header\r\n\r\n'), 400, /^malformed HTTP request/);
    expectDetail(await rawRequest(p.port, 'NOT-A-REQUEST-LINE\r\n\r\n'), 400, /^malformed HTTP request/);
    expectDetail(await rawRequest(p.port, `GET /healthz HTTP/1.1\r\nHost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`), 431, /headers/);
    await healthy();
  });

  it('bad percent-encoding (400) and an over-long id (414) answer {detail}', async () => {
    const bad = await rawRequest(p.port, message('GET', '/v1/assets/%zz', { headers: AUTH }));
    expectDetail(bad, 400, /percent-encoding/);
    expect(bad!.headers['x-request-id']).toMatch(REQUEST_ID);
    expectDetail(await rawRequest(p.port, message('GET', `/v1/versions/${'v'.repeat(300)}`, { headers: AUTH })), 414, /longer than/);
  });
});

describe('a 500 is logged with its cause and request id, which the answer carries', () => {
  const dataDir = tmpDir('dub-harden-500-');
  let p: ApiProcess;
  beforeAll(async () => {
    // A file where the upload directory must go: storing an upload fails inside the server (ENOTDIR).
    fs.mkdirSync(path.join(dataDir, 'blobs'), { recursive: true });
    fs.writeFileSync(path.join(dataDir, 'blobs', 'assets'), 'not a directory');
    p = await startApiProcess(dataDir, { DUB_API_KEYS: `${KEY}:org1` });
  });
  afterAll(async () => {
    await p?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers 500 with X-Request-Id and request_id, and logs the cause under that id', async () => {
    const form = new FormData();
    form.set('request', JSON.stringify(request));
    form.set('video', new Blob([new Uint8Array(1000)]), 'in.mp4');
    const r = await fetch(`${p.base}/v1/assets/upload`, { method: 'POST', headers: AUTH, body: form });
    expect(r.status).toBe(500);
    const id = r.headers.get('x-request-id');
    expect(id).toMatch(REQUEST_ID);
    const body = (await r.json()) as { detail: string; request_id: string };
    expect(body.request_id).toBe(id);
    expect(body.detail).toContain(id!);
    await eventually(() => p.log().includes(id!));
    const line = p.log().split('\n').find((l) => l.includes(id!));
    expect(line, p.log()).toBeDefined();
    const entry = JSON.parse(line!) as { level: number; request_id: string; err?: { message: string; stack: string } };
    expect(entry.level).toBe(50);
    expect(entry.request_id).toBe(id);
    expect(entry.err?.message).toMatch(/ENOTDIR|EEXIST|not a directory/);
    expect(entry.err?.stack).toBeTruthy();
  });
});

describe('hostile input over HTTP answers 4xx {detail}', () => {
  let t: TestApi;
  let base: string;
  let port: number;
  let assetId: string;
  let versionId: string;
  let dubbingId: string;
  beforeAll(async () => {
    t = await startTestApi('pglite');
    base = await t.api.listen(0);
    port = Number(new URL(base).port);
    const a = (await t.api.app.inject({ method: 'POST', url: '/v1/assets/', headers: t.auth1, payload: createBody() })).json();
    assetId = a.asset_id;
    dubbingId = a.languages[0].dubbing_id;
    [versionId] = await prepareAsset(t, assetId);
  });
  afterAll(async () => t?.close());

  const send = (method: string, url: string, o: { body?: string | Buffer; headers?: Record<string, string>; host?: string | null; version?: string } = {}) =>
    rawRequest(port, message(method, url, { ...o, headers: { ...AUTH, ...(o.body !== undefined && !o.headers?.['content-type'] ? { 'content-type': 'application/json' } : {}), ...o.headers } }));

  it('every answer carries X-Request-Id (success, 401, 404)', async () => {
    for (const [url, auth] of [['/v1/assets/', true], ['/v1/assets/', false], ['/nowhere', true]] as const) {
      const r = await rawRequest(port, message('GET', url, { headers: auth ? AUTH : {} }));
      expect(r?.headers['x-request-id'], url).toMatch(REQUEST_ID);
    }
  });

  it('a NUL byte in a path id: 404, never a database error', async () => {
    const id = (p: string) => `${p}_%00x`;
    const cases: [string, string, string?][] = [
      ['GET', `/v1/assets/${id('ast')}`],
      ['POST', `/v1/assets/${id('ast')}/languages`, JSON.stringify({ languages: [{ locale: 'de-DE' }] })],
      ['GET', `/v1/versions/${id('ver')}`],
      ['GET', `/v1/versions/${id('ver')}/script`],
      ['GET', `/v1/versions/${id('ver')}/srt`],
      ['PATCH', `/v1/versions/${id('ver')}/revise`, '{}'],
      ['POST', `/v1/versions/${id('ver')}/generate`, JSON.stringify({ generate_mode: 'no_lips' })],
      ['POST', `/v1/versions/${id('ver')}/studio_url`, '{}'],
      ['GET', `/v1/versions/${id('ver')}/studio/context`],
      ['POST', `/v1/dubbings/${id('dub')}/versions`, '{}'],
      ['GET', `/v1/media/${id('ast')}/source?expires=1&sig=x`],
      ['GET', `/v1/downloads/${id('ver')}/1/video?expires=1&sig=x`],
      ['GET', `/v1/assets/${assetId}%00`],
    ];
    for (const [method, url, body] of cases) {
      const r = await send(method, url, body === undefined ? {} : { body });
      const status = r?.status;
      // Signed public links check the signature first (403); every other route: not found.
      expect([403, 404], `${method} ${url}: ${r?.body}`).toContain(status);
      expectDetail(r, status!);
    }
  });

  it('a NUL byte in a JSON string: 400 naming the field', async () => {
    const nul = 'a\u0000b';
    expectDetail(await send('POST', '/v1/assets/', { body: JSON.stringify(createBody({ name: nul })) }), 400, /^name: must not contain the NUL character/);
    expectDetail(await send('POST', '/v1/assets/', { body: JSON.stringify(createBody({ source_srt: nul })) }), 400, /^source_srt: /);
    expectDetail(await send('POST', `/v1/assets/${assetId}/languages`, { body: JSON.stringify({ languages: [{ locale: 'de-DE', srt: `1\n00:00:01,000 --> 00:00:02,000\n${nul}\n` }] }) }), 400, /^languages\[0\]\.srt: /);
    expectDetail(await send('POST', `/v1/dubbings/${dubbingId}/versions`, { body: JSON.stringify({ name: nul }) }), 400, /^name: /);
    const script = sampleScript(assetId, versionId);
    script.segments[0]!.target_text = nul;
    expectDetail(await send('PUT', `/v1/versions/${versionId}/script`, { body: JSON.stringify(script) }), 400, /^segments\[0\]\.target_text: /);
    expectDetail(await send('POST', '/v1/assets/', { body: JSON.stringify({ ...createBody(), [nul]: 1 }) }), 400, /key must not contain the NUL/);
    const up = multipartBody('b', [{ name: 'request', value: JSON.stringify({ ...request, name: nul }) }, { name: 'video', filename: 'in.mp4', value: Buffer.alloc(10, 1) }]);
    expectDetail(await send('POST', '/v1/assets/upload', { body: up, headers: { 'content-type': 'multipart/form-data; boundary=b' } }), 400, /^name: must not contain the NUL/);
  });

  it('JSON nested ~5,000 levels deep (body, PUT script, the upload request as field, JSON field and file): 400', async () => {
    const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    const script = JSON.stringify(sampleScript(assetId, versionId));
    const deepScripts = [script.replace('"segments":[', `"segments":[${deep},`), script.replace('"v":1', `"v":1,"extra":${deep}`), script.replace('"target_text":', `"target_text":${deep},"x":`)];
    for (const body of deepScripts) expectDetail(await send('PUT', `/v1/versions/${versionId}/script`, { body }), 400, /^body: JSON nested deeper than 64 levels/);
    expectDetail(await send('POST', '/v1/assets/', { body: JSON.stringify(createBody()).replace('"languages":', `"extra":${deep},"languages":`) }), 400, /nested deeper/);
    const requests = [JSON.stringify(request).replace('"languages":[', `"languages":[${deep},`), JSON.stringify({ ...request, extra: 1 }).replace('"extra":1', `"extra":${deep}`)];
    for (const text of requests) {
      for (const part of [{ name: 'request', value: text }, { name: 'request', type: 'application/json', value: text }, { name: 'request', filename: 'request.json', type: 'application/json', value: text }]) {
        const up = multipartBody('b', [part, { name: 'video', filename: 'in.mp4', value: Buffer.alloc(10, 1) }]);
        expectDetail(await send('POST', '/v1/assets/upload', { body: up, headers: { 'content-type': 'multipart/form-data; boundary=b' } }), 400, /^request: JSON nested deeper than 64 levels/);
      }
    }
    // Nesting within the limit is accepted (unknown fields are ignored).
    const ok = await send('POST', '/v1/assets/', { body: JSON.stringify(createBody()).replace('"languages":', `"extra":${'['.repeat(60)}${']'.repeat(60)},"languages":`) });
    expect(ok?.status, ok?.body).toBe(201);
  });

  it('a list cursor whose number overflows: 400; a real cursor still pages', async () => {
    for (const n of ['99999999999999999999', '9223372036854775808', '1e30', '-1', '']) {
      const cursor = Buffer.from(`s:${n}`).toString('base64url');
      expectDetail(await send('GET', `/v1/assets/?cursor=${cursor}`), 400, /^cursor: invalid cursor/);
    }
    await t.api.app.inject({ method: 'POST', url: '/v1/assets/', headers: t.auth1, payload: createBody() });
    const first = (await send('GET', '/v1/assets/?limit=1'))!.json() as { next_cursor: string };
    expect(first.next_cursor).toEqual(expect.any(String));
    expect((await send('GET', `/v1/assets/?limit=1&cursor=${first.next_cursor}`))?.status).toBe(200);
  });

  it('malformed multipart (missing, empty, wrong or over-long boundary, LF-only or CR-only line ends, cut inside part headers): 400', async () => {
    const good = multipartBody('b', [{ name: 'request', value: JSON.stringify(request) }, { name: 'video', filename: 'in.mp4', value: Buffer.alloc(100, 1) }]).toString('latin1');
    const cases: [string, string, string][] = [
      ['missing boundary', 'multipart/form-data', good],
      ['empty boundary', 'multipart/form-data; boundary=', good],
      ['wrong boundary', 'multipart/form-data; boundary=other', good],
      ['over-long boundary', `multipart/form-data; boundary=${'b'.repeat(200)}`, good.replaceAll('--b', `--${'b'.repeat(200)}`)],
      ['LF-only line ends', 'multipart/form-data; boundary=b', good.replaceAll('\r\n', '\n')],
      ['CR-only line ends', 'multipart/form-data; boundary=b', good.replaceAll('\r\n', '\r')],
      ['cut inside part headers', 'multipart/form-data; boundary=b', '--b\r\nContent-Disposition: form-da'],
      ['cut after the first boundary', 'multipart/form-data; boundary=b', '--b\r\n'],
      ['no closing boundary', 'multipart/form-data; boundary=b', good.slice(0, good.lastIndexOf('--b--'))],
      ['garbage', 'multipart/form-data; boundary=b', '\u0000\u0001garbage'],
    ];
    for (const [name, type, body] of cases) {
      const r = await send('POST', '/v1/assets/upload', { body: Buffer.from(body, 'latin1'), headers: { 'content-type': type } });
      expect(r?.status, `${name}: ${r?.body}`).toBe(400);
      expectDetail(r, 400);
    }
    // The well-formed body is accepted.
    expect((await send('POST', '/v1/assets/upload', { body: Buffer.from(good, 'latin1'), headers: { 'content-type': 'multipart/form-data; boundary=b' } }))?.status).toBe(201);
  });

  it('a bad or missing Host without DUB_PUBLIC_URL: 400 on studio pages and link-bearing answers', async () => {
    for (const url of [`/v1/versions/${versionId}/studio`, `/studio/${versionId}?expires=1&sig=x`, `/v1/assets/${assetId}`, `/v1/versions/${versionId}`]) {
      for (const host of ['a b', '"><script>', 'x:y:z', '']) {
        expectDetail(await send('GET', url, { host }), 400, /^Host header: /);
      }
      // HTTP/1.0 may omit Host, but then there is no base for the links.
      expectDetail(await send('GET', url, { host: null, version: '1.0' }), 400, /^Host header: required to build the links/);
    }
    // A normal Host still works.
    expect((await send('GET', `/v1/versions/${versionId}/studio`))?.status).toBe(200);
  });
});

describe('with DUB_PUBLIC_URL the links do not need the Host header', () => {
  let t: TestApi;
  let port: number;
  beforeAll(async () => {
    t = await startTestApi('pglite', { publicUrl: 'https://dub.example.com' });
    port = Number(new URL(await t.api.listen(0)).port);
  });
  afterAll(async () => t?.close());

  it('HTTP/1.0 without Host answers with links under the public URL', async () => {
    const a = (await t.api.app.inject({ method: 'POST', url: '/v1/assets/', headers: t.auth1, payload: createBody() })).json();
    const vid = a.languages[0].versions[0].version_id;
    const r = await rawRequest(port, message('GET', `/v1/versions/${vid}`, { host: null, version: '1.0', headers: AUTH }));
    expect(r?.status, r?.body).toBe(200);
    expect(r!.json().studio_url).toMatch(/^https:\/\/dub\.example\.com\//);
  });
});
