/**
 * HTTP/1.1 over a raw TCP socket, for what fetch and fastify.inject cannot send: malformed request
 * lines, missing Host, bogus Expect, bodies cut short, dropped connections.
 */
import net from 'node:net';

export interface RawResponse {
  status: number;
  /** The whole body arrived (by Content-Length or the last chunk). */
  complete: boolean;
  /** Lower-case header names. */
  headers: Record<string, string>;
  body: string;
  /** The body as JSON (throws when it is not). */
  json(): Record<string, unknown>;
}

export interface RawOptions {
  /** Half-close the socket right after writing (the client stops sending). */
  end?: boolean;
  /** Destroy the socket right after writing (a dropped connection); resolves undefined. */
  destroy?: boolean;
  timeoutMs?: number;
}

function decodeChunked(b: Buffer): Buffer {
  const out: Buffer[] = [];
  let i = 0;
  for (;;) {
    const eol = b.indexOf('\r\n', i);
    if (eol < 0) break;
    const size = parseInt(b.subarray(i, eol).toString('latin1'), 16);
    if (!Number.isFinite(size) || size === 0) break;
    out.push(b.subarray(eol + 2, eol + 2 + size));
    i = eol + 2 + size + 2;
  }
  return Buffer.concat(out);
}

/** Parse the first response in `raw` (undefined when there is none). */
export function parseResponse(raw: Buffer): RawResponse | undefined {
  // Skip interim answers (100 Continue).
  while (/^HTTP\/1\.[01] 1\d\d /.test(raw.subarray(0, 13).toString('latin1'))) {
    const end = raw.indexOf('\r\n\r\n');
    if (end < 0) return undefined;
    raw = raw.subarray(end + 4);
  }
  const head = raw.indexOf('\r\n\r\n');
  if (head < 0) return undefined;
  const lines = raw.subarray(0, head).toString('latin1').split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0]!);
  if (!m) return undefined;
  const headers: Record<string, string> = {};
  for (const l of lines.slice(1)) {
    const c = l.indexOf(':');
    if (c > 0) headers[l.slice(0, c).trim().toLowerCase()] = l.slice(c + 1).trim();
  }
  let body = raw.subarray(head + 4);
  let complete = false;
  if (headers['transfer-encoding'] === 'chunked') {
    complete = body.includes('\r\n0\r\n\r\n') || body.subarray(0, 5).equals(Buffer.from('0\r\n\r\n'));
    body = decodeChunked(body);
  } else if (headers['content-length'] !== undefined) {
    complete = body.length >= Number(headers['content-length']);
    body = body.subarray(0, Number(headers['content-length']));
  }
  const text = body.toString('utf8');
  return { status: Number(m[1]), complete, headers, body: text, json: () => JSON.parse(text) as Record<string, unknown> };
}

/**
 * Write `bytes` to 127.0.0.1:port and read until a complete response arrived, the server closes
 * the connection or the time runs out; resolves the parsed response, or undefined when none came.
 */
export function rawRequest(port: number, bytes: string | Buffer, o: RawOptions = {}): Promise<RawResponse | undefined> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      s.destroy();
      resolve(parseResponse(Buffer.concat(chunks)));
    };
    const timer = setTimeout(finish, o.timeoutMs ?? 10_000);
    s.on('data', (c: Buffer) => {
      chunks.push(c);
      // A complete answer ends the wait even when the server keeps the connection open.
      if (parseResponse(Buffer.concat(chunks))?.complete) finish();
    });
    s.on('error', finish);
    s.on('close', finish);
    s.write(bytes, () => {
      if (o.destroy) finish();
      else if (o.end) s.end();
    });
  });
}

/** A request message with Host, Connection: close and Content-Length (unless given). */
export function message(method: string, path: string, o: { headers?: Record<string, string>; body?: string | Buffer; host?: string | null; version?: string } = {}): Buffer {
  const body = o.body === undefined ? Buffer.alloc(0) : Buffer.from(o.body);
  const h: Record<string, string> = { ...(o.host === null ? {} : { host: o.host ?? '127.0.0.1' }), connection: 'close', ...o.headers };
  if (!Object.keys(h).some((k) => k.toLowerCase() === 'content-length' || k.toLowerCase() === 'transfer-encoding') && (body.length > 0 || method !== 'GET')) h['content-length'] = String(body.length);
  const head = `${method} ${path} HTTP/${o.version ?? '1.1'}\r\n${Object.entries(h).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), body]);
}

/** A multipart/form-data body: parts joined with CRLF and the boundary, closed with --boundary--. */
export function multipartBody(boundary: string, parts: { name: string; filename?: string; type?: string; value: string | Buffer }[], close = true): Buffer {
  const out: Buffer[] = [];
  for (const p of parts) {
    const disp = `Content-Disposition: form-data; name="${p.name}"${p.filename ? `; filename="${p.filename}"` : ''}`;
    out.push(Buffer.from(`--${boundary}\r\n${disp}\r\n${p.type ? `Content-Type: ${p.type}\r\n` : ''}\r\n`), Buffer.from(p.value), Buffer.from('\r\n'));
  }
  if (close) out.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(out);
}
