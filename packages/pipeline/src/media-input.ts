/**
 * The media inputs of a prepare-asset job (source video, optional clean speech / background
 * tracks): a blob already in the store, or a URL fetched through core's safeFetch (SSRF-checked,
 * size and time limited) into a cached `fetch-*` artifact. Size limits apply to both; failures
 * become the contract's asset error codes.
 */
import { createWriteStream } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import {
  AssetError,
  DubError,
  PayloadTooLargeError,
  UnsafeUrlError,
  safeFetch,
  type AssetErrorCode,
  type BlobStore,
  type MediaRef,
} from '@dub/core';
import type { StageRunner } from './stage-runner.js';

export type MediaField = 'media_url' | 'background_url' | 'speech_url';

export interface ResolvedMedia {
  /** Blob key holding the bytes (the given blob, or the fetch artifact). */
  key: string;
  size: number;
  /** What later stages key their cache on. */
  identity: { blob: string; size: number } | { url: string };
}

export interface MediaInputOptions {
  maxBytes: number | undefined;
  allowPrivate: boolean;
  /** Time limit of connecting and of idle body reads (ms). */
  fetchTimeoutMs: number;
}

function sizeError(field: MediaField, size: number | undefined, max: number): AssetError {
  const code: AssetErrorCode = field === 'media_url' ? 'video_size_limit_reached' : 'invalid_input';
  const what = field === 'media_url' ? 'the video file' : `the ${field.replace('_url', '')} track`;
  const is = size === undefined ? 'is larger than' : `is ${size} bytes; more than`;
  return new AssetError(code, `${what} ${is} the limit of ${max} bytes`, { details: { field, ...(size !== undefined ? { size } : {}), max } });
}

/** Find or fetch one media input and check its size. */
export async function resolveMedia(ref: MediaRef, field: MediaField, store: BlobStore, runner: StageRunner, opts: MediaInputOptions): Promise<ResolvedMedia> {
  if ('blob' in ref) {
    const st = await store.stat(ref.blob);
    if (!st) throw new AssetError('invalid_input', `the uploaded ${field === 'media_url' ? 'video' : field.replace('_url', ' track')} (${ref.blob}) is not in the blob store`, { details: { field } });
    if (opts.maxBytes !== undefined && st.size > opts.maxBytes) throw sizeError(field, st.size, opts.maxBytes);
    return { key: ref.blob, size: st.size, identity: { blob: ref.blob, size: st.size } };
  }
  const stage = `fetch-${field.replace('_url', '')}`;
  const r = await runner.run(stage, { url: ref.url, maxBytes: opts.maxBytes ?? null }, async (out, ctx) => {
    const file = path.join(out.dir, 'media');
    try {
      const res = await safeFetch(ref.url, {
        field,
        allowPrivate: opts.allowPrivate,
        timeoutMs: opts.fetchTimeoutMs,
        ...(opts.maxBytes !== undefined ? { maxBytes: opts.maxBytes } : {}),
        ...(ctx.signal ? { signal: ctx.signal } : {}),
      });
      if (res.status < 200 || res.status >= 300) {
        res.body.destroy();
        const retryable = res.status === 408 || res.status === 429 || res.status >= 500;
        throw new AssetError('media_fetch_failed', `${field} answered HTTP ${res.status}`, { retryable, details: { field, status: res.status } });
      }
      await pipeline(res.body, createWriteStream(file));
    } catch (e) {
      throw fetchError(e, field, opts.maxBytes);
    }
    out.addFile('media', file);
    return null;
  });
  const key = r.files.media!;
  const size = (await store.stat(key))?.size ?? 0;
  if (opts.maxBytes !== undefined && size > opts.maxBytes) throw sizeError(field, size, opts.maxBytes);
  return { key, size, identity: { url: ref.url } };
}

function fetchError(e: unknown, field: MediaField, maxBytes: number | undefined): DubError {
  if (e instanceof AssetError) return e;
  if (e instanceof PayloadTooLargeError) return sizeError(field, undefined, maxBytes ?? e.maxBytes);
  if (e instanceof UnsafeUrlError) return new AssetError('media_fetch_failed', e.message, { cause: e, details: { field } });
  if (e instanceof DubError && e.code === 'aborted') return e;
  const retryable = e instanceof DubError ? e.retryable : true;
  return new AssetError('media_fetch_failed', `${field} could not be fetched: ${(e as Error).message}`, { cause: e, retryable, details: { field } });
}
