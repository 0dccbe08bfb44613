/**
 * A blob store described as data, so each worker thread can open its own: a filesystem root
 * (the embedded data dir, or a path shared by every worker host), a NATS object store bucket, or
 * an S3-compatible bucket and prefix (s3-blob-store.ts).
 */
import { FsBlobStore, ValidationError, type BlobStore } from '@dub/core';
import { parseS3Url } from './s3-location.js';

export type BlobStoreSpec = { kind: 'fs'; root: string } | { kind: 'nats'; servers: string[]; bucket: string } | { kind: 's3'; bucket: string; prefix: string };

export const DEFAULT_BLOB_BUCKET = 'dub-blobs';

/** Parse `--blobs nats|nats:BUCKET|fs:PATH|s3://BUCKET[/PREFIX]`. */
export function parseBlobsOption(raw: string, servers: string[]): BlobStoreSpec {
  if (raw.startsWith('s3://')) return { kind: 's3', ...parseS3Url(raw) };
  if (raw === 'nats') return { kind: 'nats', servers, bucket: DEFAULT_BLOB_BUCKET };
  if (raw.startsWith('nats:')) return { kind: 'nats', servers, bucket: raw.slice(5) || DEFAULT_BLOB_BUCKET };
  if (raw.startsWith('fs:') && raw.length > 3) return { kind: 'fs', root: raw.slice(3) };
  throw new ValidationError(`--blobs must be nats, nats:BUCKET, fs:PATH or s3://BUCKET[/PREFIX], got "${raw}"`, { field: 'blobs' });
}

/** The spec of a store that can be reopened in another thread, or undefined. */
export function describeStore(store: BlobStore): BlobStoreSpec | undefined {
  if (store instanceof FsBlobStore) return { kind: 'fs', root: store.root };
  const spec = (store as { spec?: BlobStoreSpec }).spec;
  return spec && (spec.kind === 'fs' || spec.kind === 'nats' || spec.kind === 's3') ? spec : undefined;
}

export interface OpenedStore {
  store: BlobStore;
  close(): Promise<void>;
}

export async function openBlobStore(spec: BlobStoreSpec): Promise<OpenedStore> {
  if (spec.kind === 'fs') return { store: new FsBlobStore(spec.root), close: async () => {} };
  if (spec.kind === 's3') {
    const { S3BlobStore } = await import('./s3-blob-store.js');
    const s = new S3BlobStore({ bucket: spec.bucket, prefix: spec.prefix });
    void s.abortStaleUploads();
    return { store: s, close: () => s.close() };
  }
  const { NatsObjectBlobStore } = await import('./nats-object-store.js');
  const s = await NatsObjectBlobStore.connect({ servers: spec.servers, bucket: spec.bucket });
  return { store: s, close: () => s.close() };
}
