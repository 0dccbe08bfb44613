/**
 * POST /v1/assets/upload: multipart parts streamed straight into the blob store, never buffered.
 * `video` (<= 5 GB, and the account's media size limit) and `background` (<= 500 MB) are limited
 * while streaming: past the limit the part is cut off and its partial blob deleted. The `request`
 * part (a JSON field, or a file part with JSON content) is validated like the JSON create body.
 */
import { blobKeys, DubError, newId, ValidationError, type Asset, type BlobStore } from '@dub/core';
import type { FastifyRequest } from 'fastify';
import { Transform, type Readable } from 'node:stream';
import type { DubService } from './service.js';
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
    if (n > max) throw new ValidationError('request: part too large', { field: 'request' });
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export async function handleUpload(req: FastifyRequest, ctx: UploadContext): Promise<Asset> {
  if (!req.isMultipart()) throw new ValidationError('the upload must be multipart/form-data with parts request, video and optional background', { field: 'content-type' });
  const assetId = newId('ast');
  const written: string[] = [];
  let requestText: string | undefined;
  let videoKey: string | undefined;
  let backgroundKey: string | undefined;
  try {
    for await (const part of req.parts()) {
      if (part.type === 'field') {
        // A field sent with Content-Type application/json arrives already parsed.
        if (part.fieldname === 'request') requestText = typeof part.value === 'string' ? part.value : JSON.stringify(part.value);
        continue;
      }
      if (part.fieldname === 'request') {
        requestText = await readText(part.file, MAX_REQUEST_BYTES);
        continue;
      }
      if (part.fieldname !== 'video' && part.fieldname !== 'background') {
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
          ? new DubError('video_size_limit_reached', `video_size_limit_reached: the video exceeds the account's limit of ${accountMax} bytes`, { status: 403 })
          : new ValidationError(`${part.fieldname}: the file exceeds the maximum size of ${isVideo ? '5 GB' : '500 MB'}`, { field: part.fieldname }),
      );
      part.file.on('error', (e) => limit.destroy(e));
      written.push(key);
      const st = await ctx.store.put(key, part.file.pipe(limit));
      if (st.size === 0) throw new ValidationError(`${part.fieldname}: the file is empty`, { field: part.fieldname });
      if (isVideo) videoKey = key;
      else backgroundKey = key;
    }
    if (requestText === undefined) throw new ValidationError('request: the JSON part "request" is required', { field: 'request' });
    if (!videoKey) throw new ValidationError('video: the file part "video" is required', { field: 'video' });
    let body: unknown;
    try {
      body = JSON.parse(requestText);
    } catch (e) {
      throw new ValidationError(`request: must be JSON (${(e as Error).message})`, { field: 'request' });
    }
    const input = await parseCreateAsset(body, ctx.checks, true);
    return await ctx.service.createAsset(ctx.org, input, ctx.baseUrl, { assetId, videoKey, ...(backgroundKey ? { backgroundKey } : {}) });
  } catch (e) {
    for (const k of written) await ctx.store.delete(k).catch(() => undefined);
    throw e;
  }
}
