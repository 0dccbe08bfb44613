/**
 * Seeded fuzz of the HTTP API: a few hundred requests across every endpoint and the upload, built
 * from valid requests by mutating ids, query parameters, headers, JSON bodies and multipart
 * framing with hostile values (NUL bytes, lone surrogates, deep nesting, huge numbers, long runs
 * of digits and spaces, broken encodings, cut-short bodies), sent over raw sockets to a listening
 * server with the embedded defaults (PGlite, blobs in the data dir). Every answer must be below
 * 500, every error must be the contract's `{detail}` with an X-Request-Id, no request may take
 * long, and the server must answer normally afterwards.
 *
 * DUB_FUZZ_SEED=<n> replays another sequence; DUB_FUZZ_REQUESTS=<n> changes its length.
 */
import { blobKeys } from '@dub/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBody, prepareAsset, sampleScript, startTestApi, type TestApi } from './api-helpers.js';
import { message, multipartBody, rawRequest, type RawResponse } from './support/raw-http.js';

const SEED = Number(process.env.DUB_FUZZ_SEED ?? 20261124);
const REQUESTS = Number(process.env.DUB_FUZZ_REQUESTS ?? 400);
/** No single request may take longer than this (a quadratic path would take seconds). */
const MAX_REQUEST_MS = 5000;
/**
 * A speaker's voice preview synthesizes a line with the TTS engine (Kokoro: its session is created
 * on the first preview): seconds of real work, 7.9 s once at load ~8 on two cores.
 */
const SYNTHESIS_REQUEST_MS = 30_000;

type Rand = () => number;

/** mulberry32 */
function prng(seed: number): Rand {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Percent-encode the UTF-8 bytes of `s` (lone surrogates become U+FFFD) except unreserved characters. */
const pct = (s: string): string => [...Buffer.from(s)].map((b) => (/[A-Za-z0-9._~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).padStart(2, '0')}`)).join('');

const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
const chance = (r: Rand, p: number) => r() < p;
const int = (r: Rand, n: number) => Math.floor(r() * n);

/** A hostile string: the inputs that broke services before, and random noise. */
function hostileString(r: Rand): string {
  const long = () => 1 + int(r, 200_000);
  return pick(r, [
    () => '',
    () => ' ',
    () => '\u0000',
    () => `a\u0000b`,
    () => '\ud800',
    () => 'x\udfffy',
    () => '%00',
    () => '%zz',
    () => '../../etc/passwd',
    () => '<script>alert(1)</script>',
    () => '"\'\\',
    () => '😀🇪🇸 مرحبا שלום',
    () => '\r\n\r\n',
    () => '1'.repeat(long()),
    () => `${' '.repeat(long())}x`,
    () => `${'1'.repeat(long())}-->`,
    () => '00:00:01,000 --> 00:00:02,000',
    () => `1\n${'9'.repeat(long())}\nx\n`,
    () => `1\n00:00:01,000 --> 00:00:02,000\n${'11:22:'.repeat(int(r, 20_000))}\n`,
    () => 'a'.repeat(long()),
    () => '-1',
    () => '1e309',
    () => 'NaN',
    () => 'null',
    () => '__proto__',
    () => 'constructor',
    () => 'en-US',
    () => 'th-TH',
    () => 'he-IL',
    () => Array.from({ length: 1 + int(r, 40) }, () => String.fromCharCode(int(r, 0x3000))).join(''),
  ])();
}

function deep(r: Rand, depth: number): unknown {
  let v: unknown = chance(r, 0.5) ? 1 : 'x';
  for (let i = 0; i < depth; i++) v = chance(r, 0.5) ? [v] : { a: v };
  return v;
}

/** A hostile JSON value. */
function hostileValue(r: Rand): unknown {
  return pick(r, [
    () => null,
    () => true,
    () => 0,
    () => -1,
    () => 1e308,
    () => -1e308,
    () => 2 ** 53 + 1,
    () => 0.5,
    () => [],
    () => ({}),
    () => hostileString(r),
    () => [hostileString(r)],
    () => ({ locale: hostileString(r) }),
    () => deep(r, pick(r, [10, 63, 65, 200, 5000])),
    () => Array.from({ length: int(r, 5000) }, () => ({ locale: 'es-ES' })),
    () => JSON.parse('{"__proto__":{"polluted":1}}'),
  ])();
}

/** Mutate a JSON body: change, add or delete fields, or replace it whole. */
function mutateJson(r: Rand, body: unknown): unknown {
  if (chance(r, 0.1)) return hostileValue(r);
  const b = structuredClone(body) as Record<string, unknown>;
  const n = 1 + int(r, 3);
  for (let i = 0; i < n; i++) {
    const keys = Object.keys(b);
    const op = int(r, 4);
    if (op === 0 && keys.length) delete b[pick(r, keys)];
    else if (op === 1) b[chance(r, 0.5) && keys.length ? pick(r, keys) : hostileString(r).slice(0, 50)] = hostileValue(r);
    else if (op === 2 && Array.isArray(b.languages)) b.languages = [...(b.languages as unknown[]), { locale: hostileString(r), srt: chance(r, 0.5) ? hostileString(r) : undefined }];
    else if (op === 3 && Array.isArray(b.segments) && b.segments.length) {
      const seg = { ...(b.segments as Record<string, unknown>[])[0]! };
      seg[pick(r, ['start', 'end', 'target_text', 'source_text', 'speaker', 'id', 'words'])] = hostileValue(r);
      b.segments = [seg, ...(b.segments as unknown[]).slice(1)];
    } else if (keys.length) b[pick(r, keys)] = hostileString(r);
  }
  return b;
}

/** Serialize, and sometimes break the text (cut short, stray bytes, invalid UTF-8). */
function jsonText(r: Rand, v: unknown): Buffer {
  let s: string;
  try {
    s = JSON.stringify(v) ?? 'null';
  } catch {
    s = '[]';
  }
  const b = Buffer.from(s);
  switch (chance(r, 0.15) ? int(r, 4) : -1) {
    case 0:
      return b.subarray(0, int(r, b.length));
    case 1:
      return Buffer.concat([b, Buffer.from([0xff, 0xfe, 0x00])]);
    case 2:
      return Buffer.from(s.replace(/"/, ''));
    case 3:
      return Buffer.from(`${'['.repeat(5000)}${']'.repeat(5000)}`);
    default:
      return b;
  }
}

interface Fixture {
  assetId: string;
  versionId: string;
  dubbingId: string;
  otherAssetId: string;
  otherVersionId: string;
  studioQuery: string;
  mediaPath: string;
}

function idFor(r: Rand, kind: 'ast' | 'ver' | 'dub', f: Fixture): string {
  const mine = { ast: f.assetId, ver: f.versionId, dub: f.dubbingId }[kind];
  const other = { ast: f.otherAssetId, ver: f.otherVersionId, dub: 'dub_aaaaaaaaaaaaaaaaaaaaaaaa' }[kind];
  return pick(r, [
    () => mine,
    () => mine,
    () => mine,
    () => other,
    () => `${kind}_${'abcdefghijklmnopqrstuvwxyz234567'[int(r, 32)]!.repeat(24)}`,
    () => pct(hostileString(r).slice(0, 300)),
    () => `${mine}%00`,
    () => '%zz',
    () => `${kind}_%ff%fe`,
    () => `${kind}_${'x'.repeat(int(r, 400))}`,
    () => '..',
  ])();
}

function query(r: Rand, f: Fixture): string {
  const params: string[] = [];
  if (chance(r, 0.2)) params.push(f.studioQuery);
  const names = ['limit', 'cursor', 'locality', 'srt_profile', 'expires', 'sig', 'locale', 'x'];
  const n = chance(r, 0.5) ? int(r, 4) : 0;
  for (let i = 0; i < n; i++) {
    const v = chance(r, 0.3) ? pick(r, ['1', '100', '101', '0', 'source', 'target', 'mobile', 'global_mobile', 'en-US', Buffer.from('s:99999999999999999999').toString('base64url')]) : hostileString(r).slice(0, 2000);
    params.push(`${pick(r, names)}=${chance(r, 0.9) ? pct(v) : v.replace(/[\s\r\n]/g, '')}`);
  }
  return params.length ? `?${params.join('&')}` : '';
}

interface FuzzRequest {
  what: string;
  bytes: Buffer;
  /** The client stops sending early: no answer is required. */
  cut: boolean;
}

const JSON_TYPE = { 'content-type': 'application/json' };

function uploadBody(r: Rand): { body: Buffer; type: string } {
  const boundary = pick(r, ['b', 'dubfuzz', 'x'.repeat(70), '----WebKitFormBoundary7MA4YWxkTrZu0gW']);
  const req = chance(r, 0.7) ? { name: 'Fuzz', locale: 'en-US', languages: [{ locale: 'fr-FR' }] } : mutateJson(r, { name: 'Fuzz', locale: 'en-US', languages: [{ locale: 'fr-FR' }] });
  const parts: { name: string; filename?: string; type?: string; value: string | Buffer }[] = [];
  const requestPart = pick(r, [
    () => ({ name: 'request', value: jsonText(r, req) }),
    () => ({ name: 'request', type: 'application/json', value: jsonText(r, req) }),
    () => ({ name: 'request', filename: 'request.json', type: 'application/json', value: jsonText(r, req) }),
  ])();
  const video = { name: 'video', filename: 'in.mp4', type: 'video/mp4', value: Buffer.alloc(int(r, 3) === 0 ? 0 : 1 + int(r, 100_000), 7) };
  const extra = { name: pick(r, ['background', 'video', 'other', '__proto__', hostileString(r).slice(0, 30)]), filename: chance(r, 0.5) ? 'f.bin' : undefined, value: Buffer.alloc(int(r, 1000), 1) };
  for (const p of [requestPart, video, extra]) if (chance(r, 0.85)) parts.push(p);
  if (chance(r, 0.3)) parts.reverse();
  let body = multipartBody(boundary, parts, !chance(r, 0.1));
  switch (chance(r, 0.3) ? int(r, 5) : -1) {
    case 0:
      body = body.subarray(0, int(r, body.length));
      break;
    case 1:
      body = Buffer.from(body.toString('latin1').replaceAll('\r\n', '\n'), 'latin1');
      break;
    case 2:
      body = Buffer.from(body.toString('latin1').replaceAll('\r\n', '\r'), 'latin1');
      break;
    case 3:
      body = Buffer.concat([body, Buffer.from(hostileString(r))]);
      break;
    case 4:
      body = Buffer.from(body.toString('latin1').replaceAll(`--${boundary}`, '--other'), 'latin1');
      break;
  }
  const type = pick(r, [`multipart/form-data; boundary=${boundary}`, `multipart/form-data; boundary=${boundary}`, `multipart/form-data; boundary="${boundary}"`, 'multipart/form-data', 'multipart/form-data; boundary=', `multipart/form-data; boundary=${'z'.repeat(200)}`, 'application/json', 'text/plain']);
  return { body, type };
}

/** One request: an endpoint with its valid request, then mutations. */
function fuzzRequest(r: Rand, f: Fixture): FuzzRequest {
  const ast = () => idFor(r, 'ast', f);
  const ver = () => idFor(r, 'ver', f);
  const dub = () => idFor(r, 'dub', f);
  const endpoints: (() => { method: string; path: string; body?: unknown; raw?: { body: Buffer; type: string } })[] = [
    () => ({ method: 'GET', path: '/v1/assets/' }),
    () => ({ method: 'POST', path: '/v1/assets/', body: createBody() }),
    () => ({ method: 'POST', path: '/v1/assets/', body: createBody({ languages: [{ locale: 'es-ES', srt: '1\n00:00:01,000 --> 00:00:02,000\nhola\n' }], source_srt: 'x' }) }),
    () => ({ method: 'POST', path: '/v1/assets/upload', raw: uploadBody(r) }),
    () => ({ method: 'POST', path: '/v1/assets/upload', raw: uploadBody(r) }),
    () => ({ method: 'GET', path: `/v1/assets/${ast()}` }),
    () => ({ method: 'POST', path: `/v1/assets/${ast()}/languages`, body: { languages: [{ locale: pick(r, ['de-DE', 'it-IT', 'ja-JP', 'ko-KR']) }] } }),
    () => ({ method: 'GET', path: `/v1/versions/${ver()}` }),
    () => ({ method: 'PATCH', path: `/v1/versions/${ver()}/revise`, body: { studio_url_request: { sign_url: true } } }),
    () => ({ method: 'POST', path: `/v1/versions/${ver()}/generate`, body: { generate_mode: 'no_lips' } }),
    () => ({ method: 'POST', path: `/v1/versions/${ver()}/studio_url`, body: { sign_url: true, expiration_minutes: 10 } }),
    () => ({ method: 'GET', path: `/v1/versions/${ver()}/srt` }),
    () => ({ method: 'GET', path: `/v1/versions/${ver()}/script` }),
    () => ({ method: 'PUT', path: `/v1/versions/${ver()}/script`, body: sampleScript(f.assetId, f.versionId) }),
    () => ({ method: 'GET', path: `/v1/versions/${ver()}/studio/context` }),
    () => ({ method: 'GET', path: `/v1/versions/${ver()}/waveform` }),
    () => ({ method: 'POST', path: `/v1/versions/${ver()}/segments/${pick(r, ['s1', 's2', hostileString(r).slice(0, 30) || 'x'])}/redub`, body: pick(r, [{}, { text: 'Hola.' }, { text: 'Hola.', speaker: 'S1', start: 0.5, end: 2 }]) }),
    () => ({ method: 'POST', path: `/v1/versions/${ver()}/speakers/${pick(r, ['S1', hostileString(r).slice(0, 30) || 'x'])}/preview`, body: pick(r, [{}, { voice: { source: 'library', library_voice_id: 'ana' } }, { voice: null, text: 'Hola.' }]) }),
    () => ({ method: 'GET', path: `/v1/versions/${ver()}/voices` }),
    () => ({ method: 'GET', path: `/v1/versions/${ver()}/studio` }),
    () => ({ method: 'GET', path: `/studio/${ver()}` }),
    () => ({ method: 'GET', path: `/studio-assets/${hostileString(r).slice(0, 40).replace(/[^\w.-]/g, '') || 'x'}/${pick(r, ['app.js', 'style.css', '..%2f..%2fetc', 'x'])}` }),
    () => ({ method: 'POST', path: `/v1/dubbings/${dub()}/versions`, body: { name: 'copy' } }),
    () => ({ method: 'GET', path: `/v1/downloads/${ver()}/${pick(r, ['1', '0', '99999999999999999999', '-1', 'x'])}/${pick(r, ['video', 'audio', 'x'])}` }),
    () => ({ method: 'GET', path: chance(r, 0.5) ? f.mediaPath : `/v1/media/${ast()}/${pick(r, ['source', 'thumbnail', 'x'])}` }),
    () => ({ method: 'GET', path: '/v1/voices' }),
    () => ({ method: 'GET', path: `/v1/voices/${pick(r, ['ana', 'ana', hostileString(r).slice(0, 30)])}/preview` }),
    () => ({ method: 'GET', path: pick(r, ['/healthz', '/metrics', '/openapi.json', '/docs', '/v1/callbacks/public-key', '/nowhere']) }),
  ];
  const e = pick(r, endpoints)();
  const method = chance(r, 0.05) ? pick(r, ['DELETE', 'OPTIONS', 'HEAD', 'TRACE', 'PATCH', 'FOO']) : e.method;
  let path = e.path;
  if (!path.includes('?') && (method === 'GET' || chance(r, 0.2))) path += query(r, f);
  const headers: Record<string, string> = {};
  const auth = int(r, 10);
  if (auth < 7) headers.authorization = 'Bearer key-one';
  else if (auth === 7) headers.authorization = 'Bearer key-two';
  else if (auth === 8) headers.authorization = pick(r, ['Bearer', 'Basic a2V5', `Bearer ${'k'.repeat(5000)}`, 'Bearer key-one extra']);
  let body: Buffer | undefined;
  if (e.raw) {
    body = e.raw.body;
    headers['content-type'] = e.raw.type;
  } else if (e.body !== undefined || method !== 'GET') {
    body = jsonText(r, chance(r, 0.6) ? mutateJson(r, e.body ?? {}) : e.body ?? {});
    Object.assign(headers, chance(r, 0.9) ? JSON_TYPE : { 'content-type': pick(r, ['text/plain', 'application/json; charset=latin1', 'application/x-www-form-urlencoded', 'application/vnd.api+json', '']) });
  }
  if (chance(r, 0.1)) headers['if-match'] = hostileString(r).slice(0, 200).replace(/[\r\n\u0000]/g, '');
  if (chance(r, 0.1)) headers.range = pick(r, ['bytes=0-3', 'bytes=-1', 'bytes=5-1', 'bytes=0-0,1-1', `bytes=${'9'.repeat(30)}-`]);
  if (chance(r, 0.03)) headers.expect = pick(r, ['100-continue', 'bogus']);
  let host: string | null | undefined;
  if (chance(r, 0.05)) host = pick(r, [null, '', 'a b', 'x:y:z', '[::1]:1', 'example.com']);
  let cut = false;
  let bytes: Buffer;
  const transport = chance(r, 0.1) ? int(r, 3) : -1;
  if (transport === 0 && body) {
    // Chunked transfer encoding.
    headers['transfer-encoding'] = 'chunked';
    bytes = message(method, path, { headers, host, body: Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from(body.length ? '\r\n0\r\n\r\n' : '\r\n')]) });
  } else if (transport === 1 && body) {
    // Declares more than it sends, then stops sending.
    headers['content-length'] = String(body.length + 1 + int(r, 1_000_000));
    bytes = message(method, path, { headers, host, body });
    cut = true;
  } else if (transport === 2) {
    // Garbage inside the request line or headers.
    bytes = Buffer.concat([Buffer.from(`${method} ${path}${pick(r, [' HTTP/1.1\r\n\r\n', ' HTTP/9.9\r\nHost: x\r\n\r\n', '\r\n\r\n', ` HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n`, ` HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n`, ` HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n`])}`, 'latin1')]);
  } else bytes = message(method, path, { headers, host, ...(body ? { body } : {}) });
  return { what: `${method} ${path.slice(0, 120)} [${headers['content-type'] ?? ''}${body ? `, ${body.length} B` : ''}${transport >= 0 ? `, transport ${transport}` : ''}]`, bytes, cut };
}

/** A small WAV (a 440 Hz tone) as the asset's source, so the waveform route has real audio. */
function toneWav(seconds = 1, rate = 16_000): Buffer {
  const n = seconds * rate;
  const b = Buffer.alloc(44 + n * 2);
  b.write('RIFF', 0);
  b.writeUInt32LE(36 + n * 2, 4);
  b.write('WAVEfmt ', 8);
  b.writeUInt32LE(16, 16);
  b.writeUInt16LE(1, 20);
  b.writeUInt16LE(1, 22);
  b.writeUInt32LE(rate, 24);
  b.writeUInt32LE(rate * 2, 28);
  b.writeUInt16LE(2, 32);
  b.writeUInt16LE(16, 34);
  b.write('data', 36);
  b.writeUInt32LE(n * 2, 40);
  for (let i = 0; i < n; i++) b.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate)), 44 + i * 2);
  return b;
}

describe(`API fuzz (seed ${SEED}, ${REQUESTS} requests)`, () => {
  let t: TestApi;
  let port: number;
  let f: Fixture;
  beforeAll(async () => {
    t = await startTestApi('pglite');
    port = Number(new URL(await t.api.listen(0)).port);
    const a = (await t.api.app.inject({ method: 'POST', url: '/v1/assets/', headers: t.auth1, payload: createBody() })).json();
    const [versionId] = await prepareAsset(t, a.asset_id);
    await t.api.store.put(blobKeys.sourceVideo(a.asset_id), toneWav());
    const o = (await t.api.app.inject({ method: 'POST', url: '/v1/assets/', headers: t.auth2, payload: createBody() })).json();
    const studio = (await t.api.app.inject({ method: 'POST', url: `/v1/versions/${versionId}/studio_url`, headers: t.auth1, payload: { sign_url: true } })).json().studio_url as string;
    const asset = (await t.api.app.inject({ method: 'GET', url: `/v1/assets/${a.asset_id}`, headers: t.auth1 })).json();
    const media = new URL(asset.source_video_url as string);
    f = {
      assetId: a.asset_id,
      versionId: versionId!,
      dubbingId: a.languages[0].dubbing_id,
      otherAssetId: o.asset_id,
      otherVersionId: o.languages[0].versions[0].version_id,
      studioQuery: new URL(studio).search.slice(1),
      mediaPath: media.pathname + media.search,
    };
  });
  afterAll(async () => t?.close());

  it('answers every request below 500 with {detail} errors and an X-Request-Id, quickly, and stays up', async () => {
    const r = prng(SEED);
    const problems: string[] = [];
    const statuses = new Map<number, number>();
    let slowest = { ms: 0, what: '' };
    for (let i = 0; i < REQUESTS; i++) {
      const q = fuzzRequest(r, f);
      const t0 = performance.now();
      const res: RawResponse | undefined = await rawRequest(port, q.bytes, q.cut ? { end: true, timeoutMs: 5000 } : { timeoutMs: 15_000 });
      const ms = performance.now() - t0;
      if (ms > slowest.ms) slowest = { ms, what: q.what };
      const tag = `#${i} ${q.what}`;
      if (ms > (/\/speakers\/[^/ ]+\/preview[ ?]/.test(q.what) ? SYNTHESIS_REQUEST_MS : MAX_REQUEST_MS)) problems.push(`${tag}: took ${Math.round(ms)} ms`);
      if (!res) {
        if (!q.cut) problems.push(`${tag}: no answer`);
        continue;
      }
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (res.status >= 500) problems.push(`${tag}: ${res.status} ${res.body.slice(0, 300)}`);
      if (!/^req_[0-9a-f]{16}$/.test(res.headers['x-request-id'] ?? '')) problems.push(`${tag}: ${res.status} without X-Request-Id`);
      // The studio pages answer their errors as the page (HTML that shows them), by design.
      const page = /^GET (\/studio\/|\/v1\/versions\/[^/?]*\/studio[? ])/.test(q.what) && /^text\/html/.test(res.headers['content-type'] ?? '');
      if (res.status >= 400 && !page && !q.bytes.subarray(0, 5).equals(Buffer.from('HEAD '))) {
        let detail: unknown;
        try {
          detail = res.json().detail;
        } catch {
          detail = undefined;
        }
        if (typeof detail !== 'string' || detail === '') problems.push(`${tag}: ${res.status} without {detail}: ${res.body.slice(0, 200)}`);
      }
    }
    const summary = `seed ${SEED}: statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}; slowest ${Math.round(slowest.ms)} ms (${slowest.what})`;
    expect(problems, summary).toEqual([]);
    // Most requests were answered (the cut-short ones need not be), and not all alike.
    expect([...statuses.values()].reduce((a, b) => a + b, 0)).toBeGreaterThan(REQUESTS * 0.8);
    expect(statuses.size, summary).toBeGreaterThan(4);

    // Still up: health, and a normal create and read.
    expect((await rawRequest(port, message('GET', '/healthz')))?.status).toBe(200);
    const created = await rawRequest(port, message('POST', '/v1/assets/', { headers: { authorization: 'Bearer key-one', ...JSON_TYPE }, body: JSON.stringify(createBody()) }));
    expect(created?.status, created?.body).toBe(201);
    const id = created!.json().asset_id as string;
    expect((await rawRequest(port, message('GET', `/v1/assets/${id}`, { headers: { authorization: 'Bearer key-one' } })))?.status).toBe(200);
  });
});
