/**
 * POST /v1/assets/upload: multipart parts streamed straight into the blob store, never buffered.
 * `video` (<= 5 GB, and the account's media size limit) and `background` (<= 500 MB) are limited
 * while streaming: past the limit the part is cut off and its partial blob deleted. The `request`
 * part (a JSON field, or a file part with JSON content) is validated like the JSON create body.
 */
import { blobKeys, isDubError, newId, ValidationError, type Asset, type BlobStore } from '@dub/core';
import type { Multipart } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { pipeline, Transform, type Readable } from 'node:stream';
import type { DubService } from './service.js';
import { MediaSizeLimitError, PayloadTooLargeError } from './errors.js';
import { MAX_JSON_DEPTH, parseJsonText } from './json-body.js';
import { parseCreateAsset, type CreateChecks } from './validation.js';

export const MAX_VIDEO_BYTES = 5 * 1024 ** 3;
export const MAX_BACKGROUND_BYTES = 500 * 1024 ** 2;
const MAX_REQUEST_BYTES = 32 * 1024 * 1024;

export interface UploadContext {
  service: DubService;
  store: BlobStore;
  checks: CreateChecks;
  org: string;
  baseUrl: string;
  /** The account's media size limit (DUB_MAX_MEDIA_BYTES / per-org), if any. */
  maxMediaBytes: number | undefined;
}

function limiter(max: number, onExceed: () => Error): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _e, cb) {
      seen += chunk.length;
      if (seen > max) cb(onExceed());
      else cb(null, chunk);
    },
  });
}

async function readText(stream: Readable, max: number): Promise<string> {
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const c of stream) {
    n += (c as Buffer).length;
    if (n > max) throw new PayloadTooLargeError(`request: larger than the limit of ${max} bytes`);
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

const LIMIT_DETAILS: Record<string, string> = {
  FST_PARTS_LIMIT: 'more than 16 parts',
  FST_FILES_LIMIT: 'more than 4 file parts',
  FST_FIELDS_LIMIT: 'more than 8 fields',
  FST_PROTO_VIOLATION: 'a part named like a property of Object.prototype',
};

/**
 * What the client did wrong when the multipart parser, or a part's stream, fails: a malformed body
 * (no or wrong boundary, LF-only or CR-only line ends, cut inside part headers), a body that ends
 * inside a part, a dropped connection, too many parts. Always 400; our own errors pass unchanged.
 */
export function multipartError(e: unknown, part?: string): Error {
  if (isDubError(e)) return e;
  const err = e as { code?: string; message?: string };
  if (err.code === 'FST_INVALID_JSON_FIELD_ERROR') return new ValidationError('request: must be JSON (the part declares Content-Type application/json)', { field: 'request' });
  const limit = err.code ? LIMIT_DETAILS[err.code] : undefined;
  if (limit) return new ValidationError(`multipart body: ${limit}; send request, video and optional background`, { field: 'body' });
  const reason = String(err.message ?? e).slice(0, 120);
  const where = part ? `${part}: the upload ended inside this part` : 'multipart body: malformed';
  return new ValidationError(`${where} (${reason}); send multipart/form-data with CRLF line ends, the boundary of the Content-Type header and a final --boundary--`, { field: part ?? 'body' });
}

/** The boundary parameter of a multipart Content-Type: 1 to 70 characters (RFC 2046 5.1.1). */
function checkBoundary(contentType: string | undefined): void {
  const m = /;\s*boundary=(?:"([^"]*)"|([^;\s]*))/i.exec(contentType ?? '');
  const boundary = m ? (m[1] ?? m[2] ?? '') : undefined;
  if (boundary === undefined) throw new ValidationError('content-type: multipart/form-data needs a boundary parameter', { field: 'content-type' });
  if (boundary.length < 1 || boundary.length > 70) throw new ValidationError(`content-type: the multipart boundary must be 1 to 70 characters (RFC 2046), not ${boundary.length}`, { field: 'content-type' });
}

/** Depth of nesting of a parsed JSON value, counted without recursion and only up to `max + 1`. */
function exceedsDepth(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (d + 1 > max) return true;
    for (const x of Array.isArray(v) ? v : Object.values(v)) stack.push([x, d + 1]);
  }
  return false;
}

export async function handleUpload(req: FastifyRequest, ctx: UploadContext): Promise<Asset> {
  if (!req.isMultipart()) throw new ValidationError('the upload must be multipart/form-data with parts request, video and optional background', { field: 'content-type' });
  checkBoundary(req.headers['content-type']);
  const assetId = newId('ast');
  const written: string[] = [];
  let requestText: string | undefined;
  let videoKey: string | undefined;
  let backgroundKey: string | undefined;
  // A client that drops the connection inside a file part may leave that part's stream neither
  // ended nor failed: fail it, so the blob store lets go of its file and the handler answers.
  let current: { destroyed: boolean; destroy(e: Error): void } | undefined;
  const onClose = (): void => {
    if (!req.raw.complete && current && !current.destroyed) current.destroy(new Error('the connection closed before the upload ended'));
  };
  req.raw.once('close', onClose);
  try {
    const parts = req.parts()[Symbol.asyncIterator]();
    for (;;) {
      let next: IteratorResult<Multipart>;
      try {
        next = await parts.next();
      } catch (e) {
        throw multipartError(e);
      }
      if (next.done) break;
      const part = next.value;
      if (part.type === 'field') {
        // A field sent with Content-Type application/json arrives already parsed.
        if (part.fieldname === 'request') {
          if (typeof part.value !== 'string' && exceedsDepth(part.value, MAX_JSON_DEPTH)) throw new ValidationError(`request: JSON nested deeper than ${MAX_JSON_DEPTH} levels`, { field: 'request' });
          requestText = typeof part.value === 'string' ? part.value : JSON.stringify(part.value);
        }
        continue;
      }
      if (part.fieldname === 'request') {
        try {
          requestText = await readText(part.file, MAX_REQUEST_BYTES);
        } catch (e) {
          throw multipartError(e, 'request');
        }
        continue;
      }
      if (part.fieldname !== 'video' && part.fieldname !== 'background') {
        part.file.on('error', () => undefined);
        part.file.resume();
        continue;
      }
      const isVideo = part.fieldname === 'video';
      if ((isVideo && videoKey) || (!isVideo && backgroundKey)) throw new ValidationError(`${part.fieldname}: only one file is allowed`, { field: part.fieldname });
      const accountMax = isVideo ? ctx.maxMediaBytes : undefined;
      const contractMax = isVideo ? MAX_VIDEO_BYTES : MAX_BACKGROUND_BYTES;
      const max = accountMax !== undefined ? Math.min(accountMax, contractMax) : contractMax;
      const key = isVideo ? blobKeys.sourceUpload(assetId) : blobKeys.backgroundUpload(assetId);
      const limit = limiter(max, () =>
        accountMax !== undefined && accountMax < contractMax
          ? new MediaSizeLimitError(accountMax)
          : new PayloadTooLargeError(`${part.fieldname}: the file exceeds the maximum size of ${isVideo ? '5 GB' : '500 MB'}`),
      );
      // The part is joined to the limiter by pipeline, which listens to both at once: the part can
      // fail (the body ends inside it, the connection drops, the size limit is passed) before the
      // blob store has opened its file and attached its own listeners, and an 'error' nobody
      // listens to would end the process. A part that arrives already cut short (busboy destroyed
      // it while an earlier part was being stored) is a premature close here, not a stream that
      // never ends.
      let partError: Error | undefined;
      current = part.file;
      if (req.raw.destroyed && !req.raw.complete) onClose();
      pipeline(part.file, limit, (e) => {
        if (e) partError ??= e;
      });
      written.push(key);
      let st: { size: number };
      try {
        st = await ctx.store.put(key, limit);
      } catch (e) {
        // The part's own failure is the client's; anything else is the store's (a 500).
        throw partError ? multipartError(partError, part.fieldname) : e;
      }
      if (partError) throw multipartError(partError, part.fieldname);
      if (st.size === 0) throw new ValidationError(`${part.fieldname}: the file is empty`, { field: part.fieldname });
      if (isVideo) videoKey = key;
      else backgroundKey = key;
    }
    if (requestText === undefined) throw new ValidationError('request: the JSON part "request" is required', { field: 'request' });
    if (!videoKey) throw new ValidationError('video: the file part "video" is required', { field: 'video' });
    const body = parseJsonText(requestText, 'request');
    const input = await parseCreateAsset(body, ctx.checks, true);
    return await ctx.service.assets.createAsset(ctx.org, input, ctx.baseUrl, { assetId, videoKey, ...(backgroundKey ? { backgroundKey } : {}) });
  } catch (e) {
    for (const k of written) await ctx.store.delete(k).catch(() => undefined);
    throw e;
  } finally {
    req.raw.off('close', onClose);
  }
}
