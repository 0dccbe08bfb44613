/**
 * URL safety for every request the service makes on a caller's behalf (media_url, background_url,
 * speech_url, callback_url): only http(s), the host resolved once with dns.lookup(all) and every
 * address checked against private, loopback, link-local, unique-local, multicast, unspecified,
 * CGNAT, documentation/benchmark and IPv4-mapped-private ranges; the connection is pinned to the
 * checked address (no DNS rebinding between check and connect); redirects are followed by hand,
 * re-checking each hop.
 */
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { Readable, Transform } from 'node:stream';
import { DubError, TimeoutError, UpstreamError, ValidationError } from './errors.js';

/** A URL the service refuses to contact (bad scheme, private address, unresolvable host). */
export class UnsafeUrlError extends ValidationError {
  constructor(message: string, opts: { field?: string; cause?: unknown } = {}) {
    super(message, opts);
    this.name = 'UnsafeUrlError';
  }
}

/** A response body larger than the allowed maximum. */
export class PayloadTooLargeError extends DubError {
  readonly maxBytes: number;
  constructor(message: string, maxBytes: number) {
    super('payload_too_large', message, { status: 413, retryable: false, details: { maxBytes } });
    this.name = 'PayloadTooLargeError';
    this.maxBytes = maxBytes;
  }
}

export type AddressClass =
  | 'public'
  | 'private'
  | 'loopback'
  | 'link-local'
  | 'unique-local'
  | 'multicast'
  | 'unspecified'
  | 'cgnat'
  | 'reserved';

function v4Blocks(): [string, number, AddressClass][] {
  return [
    ['0.0.0.0', 8, 'unspecified'],
    ['10.0.0.0', 8, 'private'],
    ['100.64.0.0', 10, 'cgnat'],
    ['127.0.0.0', 8, 'loopback'],
    ['169.254.0.0', 16, 'link-local'],
    ['172.16.0.0', 12, 'private'],
    ['192.0.0.0', 24, 'reserved'],
    ['192.0.2.0', 24, 'reserved'],
    ['192.88.99.0', 24, 'reserved'],
    ['192.168.0.0', 16, 'private'],
    ['198.18.0.0', 15, 'reserved'],
    ['198.51.100.0', 24, 'reserved'],
    ['203.0.113.0', 24, 'reserved'],
    ['224.0.0.0', 4, 'multicast'],
    ['240.0.0.0', 4, 'reserved'],
  ];
}

function v6Blocks(): [string, number, AddressClass][] {
  return [
    ['::', 128, 'unspecified'],
    ['::1', 128, 'loopback'],
    ['64:ff9b:1::', 48, 'reserved'],
    ['100::', 64, 'reserved'],
    ['2001::', 23, 'reserved'],
    ['2001:db8::', 32, 'reserved'],
    ['fc00::', 7, 'unique-local'],
    ['fe80::', 10, 'link-local'],
    ['fec0::', 10, 'reserved'],
    ['ff00::', 8, 'multicast'],
  ];
}

function v4ToInt(ip: string): number {
  return ip.split('.').reduce((acc, p) => acc * 256 + Number(p), 0);
}

/** Expand an IPv6 address to 8 16-bit groups (handles ::, and a trailing dotted IPv4). */
function v6Groups(ip: string): number[] {
  let s = ip.toLowerCase();
  const pct = s.indexOf('%');
  if (pct >= 0) s = s.slice(0, pct);
  const lastColon = s.lastIndexOf(':');
  const last = s.slice(lastColon + 1);
  if (last.includes('.')) {
    const n = v4ToInt(last);
    s = `${s.slice(0, lastColon + 1)}${((n >>> 16) & 0xffff).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((x) => parseInt(x, 16)));
  if (!s.includes('::')) return parse(s).slice(0, 8);
  const [head = '', rest = ''] = s.split('::');
  const h = parse(head);
  const r = parse(rest);
  return [...h, ...new Array(Math.max(0, 8 - h.length - r.length)).fill(0), ...r].slice(0, 8);
}

function v6InBlock(groups: number[], base: string, prefix: number): boolean {
  const b = v6Groups(base);
  for (let i = 0; i < 8 && prefix > 0; i++) {
    const bits = Math.min(16, prefix);
    const mask = bits === 16 ? 0xffff : (0xffff << (16 - bits)) & 0xffff;
    if ((groups[i]! & mask) !== (b[i]! & mask)) return false;
    prefix -= bits;
  }
  return true;
}

/** Classify an IP address literal. Non-IP input throws UnsafeUrlError. */
export function classifyAddress(ip: string): AddressClass {
  const family = net.isIP(ip.split('%')[0]!);
  if (family === 4) {
    const n = v4ToInt(ip);
    for (const [base, prefix, cls] of v4Blocks()) {
      const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
      if (((n & mask) >>> 0) === ((v4ToInt(base) & mask) >>> 0)) return cls;
    }
    return 'public';
  }
  if (family === 6) {
    const g = v6Groups(ip);
    // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::/96): classify the embedded IPv4.
    const embedded = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
    if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return classifyAddress(embedded(g[6]!, g[7]!));
    if (g.slice(0, 6).every((x) => x === 0) && (g[6] !== 0 || g[7]! > 1)) return classifyAddress(embedded(g[6]!, g[7]!));
    if (v6InBlock(g, '64:ff9b::', 96)) return classifyAddress(embedded(g[6]!, g[7]!));
    // 6to4 (2002::/16) embeds an IPv4 address in groups 1-2.
    if (g[0] === 0x2002) {
      const inner = classifyAddress(embedded(g[1]!, g[2]!));
      if (inner !== 'public') return inner;
    }
    for (const [base, prefix, cls] of v6Blocks()) if (v6InBlock(g, base, prefix)) return cls;
    return 'public';
  }
  throw new UnsafeUrlError(`"${ip}" is not an IP address`);
}

export function isPublicAddress(ip: string): boolean {
  return classifyAddress(ip) === 'public';
}

export interface UrlSafetyOptions {
  /** Allow loopback and private addresses (development and tests). */
  allowPrivate?: boolean;
  /** Field name reported in errors (e.g. "media_url"). */
  field?: string;
  /** Allowed schemes; default http: and https:. */
  protocols?: readonly string[];
  /** Resolver (tests); default dns.lookup with all: true. */
  lookup?: (host: string) => Promise<{ address: string; family: number }[]>;
}

export interface CheckedUrl {
  url: URL;
  /** The address the connection must be made to. */
  address: string;
  family: 4 | 6;
}

async function defaultLookup(host: string): Promise<{ address: string; family: number }[]> {
  return dns.promises.lookup(host, { all: true, verbatim: true });
}

function parseUrl(raw: string | URL, field: string, protocols: readonly string[]): URL {
  let url: URL;
  try {
    url = raw instanceof URL ? raw : new URL(raw);
  } catch (e) {
    throw new UnsafeUrlError(`${field} is not a valid URL`, { field, cause: e });
  }
  if (!protocols.includes(url.protocol)) throw new UnsafeUrlError(`${field} must use ${protocols.map((p) => p.replace(':', '')).join(' or ')}, got ${url.protocol.replace(':', '')}`, { field });
  if (url.username || url.password) throw new UnsafeUrlError(`${field} must not carry credentials`, { field });
  if (!url.hostname) throw new UnsafeUrlError(`${field} has no host`, { field });
  return url;
}

/**
 * Resolve the URL's host and check every address. Returns the address to connect to.
 * Throws UnsafeUrlError (HTTP 400) for a bad scheme, an unresolvable host or a refused address.
 */
export async function assertPublicUrl(raw: string | URL, opts: UrlSafetyOptions = {}): Promise<CheckedUrl> {
  const field = opts.field ?? 'url';
  const url = parseUrl(raw, field, opts.protocols ?? ['http:', 'https:']);
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  let addrs: { address: string; family: number }[];
  if (net.isIP(host)) addrs = [{ address: host, family: net.isIP(host) }];
  else {
    try {
      addrs = await (opts.lookup ?? defaultLookup)(host);
    } catch (e) {
      throw new UnsafeUrlError(`${field}: host "${host}" cannot be resolved`, { field, cause: e });
    }
    if (addrs.length === 0) throw new UnsafeUrlError(`${field}: host "${host}" cannot be resolved`, { field });
  }
  if (!opts.allowPrivate) {
    for (const a of addrs) {
      const cls = classifyAddress(a.address);
      if (cls !== 'public') throw new UnsafeUrlError(`${field}: host "${host}" resolves to a ${cls} address (${a.address}), which is not allowed`, { field });
    }
  }
  const first = addrs[0]!;
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
}

export interface SafeFetchOptions extends UrlSafetyOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Maximum response body bytes; the body stream errors with PayloadTooLargeError past it. */
  maxBytes?: number;
  /** Time limit for connecting and receiving headers of each hop, and for idle body reads (ms). Default 30 s. */
  timeoutMs?: number;
  /** Redirects to follow (each hop re-checked). Default 5. */
  maxRedirects?: number;
  signal?: AbortSignal;
}

export interface SafeResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Final URL after redirects. */
  url: string;
  /** The body, limited to maxBytes. Consume or destroy it. */
  body: Readable;
}

/** Read a SafeResponse body into a buffer (respecting its byte limit). */
export async function readBody(res: SafeResponse): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of res.body) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

function limitStream(max: number | undefined, declared: number | undefined): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, cb) {
      seen += chunk.length;
      if (max !== undefined && seen > max) cb(new PayloadTooLargeError(`response body exceeds ${max} bytes`, max));
      else cb(null, chunk);
    },
    flush(cb) {
      if (declared !== undefined && seen < declared) cb(new UpstreamError(`response body ended after ${seen} of ${declared} bytes`));
      else cb();
    },
  });
}

function requestOnce(checked: CheckedUrl, opts: SafeFetchOptions, timeoutMs: number): Promise<http.IncomingMessage> {
  const { url, address, family } = checked;
  const isHttps = url.protocol === 'https:';
  const mod = isHttps ? https : http;
  // Pin the connection to the checked address: the lookup answers only with it.
  const lookup: net.LookupFunction = (_host, options, cb) => {
    if ((options as dns.LookupAllOptions).all) (cb as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, [{ address, family }]);
    else cb(null, address, family);
  };
  const headers: Record<string, string> = { 'user-agent': 'dub/0.1', ...opts.headers };
  if (opts.body !== undefined) headers['content-length'] = String(Buffer.byteLength(opts.body));
  return new Promise((resolve, reject) => {
    const req = mod.request(
      {
        protocol: url.protocol,
        hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
        port: url.port || (isHttps ? 443 : 80),
        path: `${url.pathname}${url.search}`,
        method: opts.method ?? 'GET',
        headers,
        lookup,
        agent: false,
        ...(isHttps ? { servername: net.isIP(url.hostname) ? undefined : url.hostname } : {}),
        ...(opts.signal ? { signal: opts.signal } : {}),
      },
      (res) => {
        clearTimeout(timer);
        resolve(res);
      },
    );
    const timer = setTimeout(() => req.destroy(new TimeoutError(`no response from ${url.host} within ${timeoutMs} ms`)), timeoutMs);
    req.on('error', (e) => {
      clearTimeout(timer);
      reject(e instanceof DubError ? e : new UpstreamError(`request to ${url.host} failed: ${e.message}`, { cause: e }));
    });
    if (opts.body !== undefined) req.end(opts.body);
    else req.end();
  });
}

/**
 * Fetch a URL safely: scheme and address checks on every hop, connection pinned to the checked
 * address, manual redirects (301/302/303/307/308; 303 and POST->GET on 301/302 as browsers do),
 * per-hop timeout and a body size limit.
 */
export async function safeFetch(raw: string | URL, opts: SafeFetchOptions = {}): Promise<SafeResponse> {
  const maxRedirects = opts.maxRedirects ?? 5;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  let current: string | URL = raw;
  let method = opts.method ?? 'GET';
  let body = opts.body;
  for (let hop = 0; ; hop++) {
    const checked = await assertPublicUrl(current, opts);
    const res = await requestOnce(checked, { ...opts, method, ...(body !== undefined ? { body } : { body: undefined }) }, timeoutMs);
    const status = res.statusCode ?? 0;
    if ([301, 302, 303, 307, 308].includes(status) && res.headers.location) {
      res.resume();
      if (hop >= maxRedirects) throw new UpstreamError(`too many redirects (more than ${maxRedirects})`, { upstreamStatus: status, retryable: false });
      current = new URL(res.headers.location, checked.url);
      if (status === 303 || ((status === 301 || status === 302) && method === 'POST')) {
        method = 'GET';
        body = undefined;
      }
      continue;
    }
    const declared = res.headers['content-length'] !== undefined ? Number(res.headers['content-length']) : undefined;
    if (opts.maxBytes !== undefined && declared !== undefined && declared > opts.maxBytes) {
      res.destroy();
      throw new PayloadTooLargeError(`response body of ${declared} bytes exceeds ${opts.maxBytes} bytes`, opts.maxBytes);
    }
    res.setTimeout(timeoutMs, () => res.destroy(new TimeoutError(`body read from ${checked.url.host} idle for ${timeoutMs} ms`)));
    const limited = limitStream(opts.maxBytes, method === 'HEAD' ? undefined : declared);
    res.on('error', (e) => limited.destroy(e instanceof DubError ? e : new UpstreamError(`reading from ${checked.url.host} failed: ${e.message}`, { cause: e })));
    // The error stays on the stream for its consumer (for-await, pipeline); this listener only keeps an
    // error raised before the consumer attaches from becoming an uncaught exception.
    limited.on('error', () => undefined);
    res.pipe(limited);
    return { status, headers: res.headers, url: checked.url.toString(), body: limited };
  }
}
