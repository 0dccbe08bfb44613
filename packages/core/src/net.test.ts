import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertPublicUrl, classifyAddress, readBody, safeFetch, UnsafeUrlError } from './net.js';

describe('classifyAddress', () => {
  it.each([
    ['8.8.8.8', 'public'],
    ['1.1.1.1', 'public'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.1', 'public'],
    ['192.168.1.1', 'private'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'cgnat'],
    ['100.127.255.255', 'cgnat'],
    ['100.128.0.1', 'public'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['fe80::1', 'link-local'],
    ['fd12:3456::1', 'unique-local'],
    ['fc00::1', 'unique-local'],
    ['ff02::1', 'multicast'],
    ['2001:4860:4860::8888', 'public'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:8.8.8.8', 'public'],
    ['64:ff9b::a9fe:a9fe', 'link-local'],
    ['2002:c0a8:0101::1', 'private'],
  ])('%s is %s', (ip, cls) => {
    expect(classifyAddress(ip)).toBe(cls);
  });

  it('rejects non-addresses', () => {
    expect(() => classifyAddress('example.com')).toThrow(UnsafeUrlError);
  });
});

describe('assertPublicUrl', () => {
  const lookup = (map: Record<string, string[]>) => async (h: string) => (map[h] ?? []).map((a) => ({ address: a, family: a.includes(':') ? 6 : 4 }));

  it('refuses bad schemes, credentials and private hosts with the field named', async () => {
    await expect(assertPublicUrl('ftp://example.com/x', { field: 'media_url' })).rejects.toThrow(/media_url must use http or https/);
    await expect(assertPublicUrl('not a url', { field: 'media_url' })).rejects.toThrow(/media_url is not a valid URL/);
    await expect(assertPublicUrl('http://u:p@8.8.8.8/', {})).rejects.toThrow(/credentials/);
    await expect(assertPublicUrl('http://127.0.0.1:8080/', { field: 'callback_url' })).rejects.toThrow(/callback_url.*loopback/);
    await expect(assertPublicUrl('http://[::1]/', {})).rejects.toThrow(/loopback/);
    await expect(assertPublicUrl('http://[::ffff:192.168.0.1]/', {})).rejects.toThrow(/private/);
  });

  it('checks every resolved address of a name', async () => {
    const l = lookup({ 'mixed.test': ['8.8.8.8', '10.0.0.5'], 'ok.test': ['8.8.4.4'], 'none.test': [] });
    await expect(assertPublicUrl('https://mixed.test/v.mp4', { lookup: l })).rejects.toThrow(/private/);
    await expect(assertPublicUrl('https://none.test/v.mp4', { lookup: l })).rejects.toThrow(/cannot be resolved/);
    const ok = await assertPublicUrl('https://ok.test/v.mp4', { lookup: l });
    expect(ok.address).toBe('8.8.4.4');
  });

  it('allows private addresses when told to', async () => {
    const ok = await assertPublicUrl('http://127.0.0.1:9/', { allowPrivate: true });
    expect(ok.address).toBe('127.0.0.1');
  });
});

describe('safeFetch', () => {
  let server: http.Server;
  let base: string;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      if (req.url === '/redirect-private') {
        res.writeHead(302, { location: 'http://10.0.0.1/secret' });
        return res.end();
      }
      if (req.url === '/redirect-ok') {
        res.writeHead(301, { location: '/data' });
        return res.end();
      }
      if (req.url === '/loop') {
        res.writeHead(302, { location: '/loop' });
        return res.end();
      }
      if (req.url === '/big') {
        res.writeHead(200);
        return res.end(Buffer.alloc(5000));
      }
      if (req.url === '/chunked') {
        res.write(Buffer.alloc(800));
        setTimeout(() => res.end(Buffer.alloc(800)), 20);
        return;
      }
      if (req.url === '/echo') {
        let b = '';
        req.on('data', (c) => (b += c));
        req.on('end', () => res.end(`${req.method}:${b}`));
        return;
      }
      res.end('hello');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('refuses loopback unless allowed', async () => {
    await expect(safeFetch(`${base}/data`)).rejects.toThrow(UnsafeUrlError);
    const res = await safeFetch(`${base}/data`, { allowPrivate: true });
    expect(res.status).toBe(200);
    expect((await readBody(res)).toString()).toBe('hello');
  });

  it('connects to the checked address even when the name would resolve elsewhere', async () => {
    const port = new URL(base).port;
    // "rebind.test" is unknown to the system resolver: the request only works because it is pinned.
    const res = await safeFetch(`http://rebind.test:${port}/data`, { allowPrivate: true, lookup: async () => [{ address: '127.0.0.1', family: 4 }] });
    expect((await readBody(res)).toString()).toBe('hello');
  });

  it('follows redirects, re-checking each hop', async () => {
    const res = await safeFetch(`${base}/redirect-ok`, { allowPrivate: true });
    expect(res.url).toBe(`${base}/data`);
    expect((await readBody(res)).toString()).toBe('hello');
    // The first hop is allowed by a lookup that says public; the redirect target 10.0.0.1 is refused.
    const port = new URL(base).port;
    await expect(
      safeFetch(`http://public.test:${port}/redirect-private`, {
        lookup: async () => [{ address: '8.8.8.8', family: 4 }],
        timeoutMs: 2000,
      }),
    ).rejects.toThrow();
    await expect(safeFetch(`${base}/loop`, { allowPrivate: true, maxRedirects: 3 })).rejects.toThrow(/too many redirects/);
  });

  it('enforces the redirect check on a pinned private hop', async () => {
    // first hop pinned to loopback (allowed by lookup trick is impossible without allowPrivate), so test the
    // redirect refusal directly: a public-looking first hop whose redirect points to a private literal.
    const calls: string[] = [];
    const port = new URL(base).port;
    const err = await safeFetch(`http://hop.test:${port}/redirect-private`, {
      allowPrivate: false,
      lookup: async (h) => {
        calls.push(h);
        return [{ address: '127.0.0.1', family: 4 }];
      },
    }).catch((e) => e);
    expect(err).toBeInstanceOf(UnsafeUrlError);
    expect(calls).toEqual(['hop.test']);
  });

  it('limits the body size and sends bodies', async () => {
    await expect(safeFetch(`${base}/big`, { allowPrivate: true, maxBytes: 1000 }).then(readBody)).rejects.toThrow(/exceeds 1000 bytes/);
    await expect(safeFetch(`${base}/chunked`, { allowPrivate: true, maxBytes: 1000 }).then(readBody)).rejects.toThrow(/exceeds 1000 bytes/);
    const res = await safeFetch(`${base}/echo`, { allowPrivate: true, method: 'POST', body: 'abc' });
    expect((await readBody(res)).toString()).toBe('POST:abc');
  });
});
