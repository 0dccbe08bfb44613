/** Serve a blob with HTTP range support (single range: 206 + Content-Range; unsatisfiable: 416). */
import { NotFoundError, type BlobStore } from '@dub/core';
import type { FastifyReply, FastifyRequest } from 'fastify';

export type ByteRange = { start: number; end: number } | 'unsatisfiable' | undefined;

/** Parse a Range header against a size. undefined: serve the whole blob (absent, malformed or multi-range). */
export function parseRange(header: string | undefined, size: number): ByteRange {
  if (!header) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  let start: number;
  let end: number;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0) return 'unsatisfiable';
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
    if (m[2] !== '' && Number(m[2]) < start) return undefined;
  }
  if (start >= size || size === 0) return 'unsatisfiable';
  return { start, end };
}

export async function sendBlob(req: FastifyRequest, reply: FastifyReply, store: BlobStore, key: string, contentType: string, filename?: string): Promise<FastifyReply> {
  const st = await store.stat(key);
  if (!st) throw new NotFoundError('the file is no longer available');
  reply.header('accept-ranges', 'bytes').header('cache-control', 'private, max-age=0');
  const range = parseRange(req.headers.range, st.size);
  if (range === 'unsatisfiable') return reply.status(416).header('content-range', `bytes */${st.size}`).type('application/json').send({ detail: `range not satisfiable (size ${st.size})` });
  reply.type(contentType);
  if (filename) reply.header('content-disposition', `inline; filename="${filename}"`);
  if (range) {
    reply.status(206).header('content-range', `bytes ${range.start}-${range.end}/${st.size}`).header('content-length', String(range.end - range.start + 1));
    return reply.send(await store.getStream(key, range));
  }
  reply.header('content-length', String(st.size));
  return reply.send(await store.getStream(key));
}
