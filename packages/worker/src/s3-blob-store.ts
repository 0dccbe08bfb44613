/**
 * BlobStore over S3-compatible object storage (AWS S3, MinIO, Cloudflare R2, Google Cloud Storage's
 * XML interop, Ceph RGW): `--blobs s3://BUCKET[/PREFIX]` for `dub serve`, `dub worker` and
 * `dub run`. Blob keys are object keys under PREFIX.
 *
 * Endpoint, region and credentials come from the standard AWS environment and config through the
 * official AWS SDK for JavaScript v3 (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN,
 * AWS_PROFILE and ~/.aws/{config,credentials}, AWS_REGION, AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL,
 * instance and container roles). With a custom endpoint the client uses path-style addressing
 * (what MinIO and most self-hosted servers need; DUB_S3_VIRTUAL_HOSTED=1 turns it off). Requests
 * are retried by the SDK (AWS_MAX_ATTEMPTS, default here 5, exponential backoff).
 *
 * Objects of 16 MiB or more (and every stream of unknown length) go up as multipart uploads
 * (8 MiB parts, 4 at a time): the object appears only when the upload completes, so a process
 * killed in the middle leaves no object, only parts that `abortStaleUploads` (run when a store is
 * opened) or a bucket lifecycle rule (AbortIncompleteMultipartUpload) removes. Reads stream the
 * object (ranged GETs for byte ranges). A missing object is NotFoundError / undefined / false;
 * a server that cannot be reached or answers 5xx after the retries is a StorageError (503,
 * retryable), never "missing".
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { NotFoundError, StorageError, ValidationError, checkBlobKey, writeStreamToFile, type BlobStat, type BlobStore } from '@dub/core';
import type { S3Location } from './s3-location.js';

export { parseS3Url, type S3Location } from './s3-location.js';

/** Objects this large or larger go up in parts. */
export const MULTIPART_THRESHOLD = 16 * 1024 * 1024;
export const PART_SIZE = 8 * 1024 * 1024;

export interface S3BlobStoreOptions extends S3Location {
  /** SDK client settings over the environment's (tests: endpoint and credentials). */
  client?: S3ClientConfig;
  /** Parts uploaded at once (default 4). */
  queueSize?: number;
  partSize?: number;
}

function clientConfig(o: S3BlobStoreOptions, env: NodeJS.ProcessEnv = process.env): S3ClientConfig {
  const endpoint = o.client?.endpoint ?? env.AWS_ENDPOINT_URL_S3 ?? env.AWS_ENDPOINT_URL;
  const attempts = Number(env.AWS_MAX_ATTEMPTS);
  return {
    ...(endpoint ? { forcePathStyle: env.DUB_S3_VIRTUAL_HOSTED !== '1' } : {}),
    // a region is required by the signer; with none in the environment or an AWS config file,
    // us-east-1 (S3-compatible servers mostly ignore it: MinIO, R2 "auto")
    ...(env.AWS_REGION || env.AWS_DEFAULT_REGION || fs.existsSync(env.AWS_CONFIG_FILE ?? path.join(os.homedir(), '.aws', 'config')) ? {} : { region: 'us-east-1' }),
    maxAttempts: Number.isInteger(attempts) && attempts > 0 ? attempts : 5,
    ...o.client,
  };
}

function status(e: unknown): number | undefined {
  return (e as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
}
function isMissing(e: unknown): boolean {
  const name = (e as { name?: string })?.name;
  return name === 'NoSuchKey' || name === 'NotFound' || status(e) === 404;
}
/** An error of the server or the network as a StorageError (503); a refusal of the request (4xx: credentials, bucket) as it is. */
function asStorage(e: unknown, what: string): unknown {
  if (e instanceof NotFoundError || e instanceof ValidationError) return e;
  const s = status(e);
  if (s !== undefined && s < 500) return e;
  const code = (e as { code?: string; name?: string })?.code ?? (e as { name?: string })?.name ?? 'S3';
  return new StorageError(`storage unavailable: ${what} failed (${code}${s ? `, HTTP ${s}` : ''}); retry later`, String(code), { cause: e });
}

export class S3BlobStore implements BlobStore {
  readonly spec: { kind: 's3'; bucket: string; prefix: string };
  readonly client: S3Client;
  private readonly queueSize: number;
  private readonly partSize: number;

  constructor(o: S3BlobStoreOptions) {
    this.spec = { kind: 's3', bucket: o.bucket, prefix: o.prefix };
    this.client = new S3Client(clientConfig(o));
    this.queueSize = o.queueSize ?? 4;
    this.partSize = Math.max(5 * 1024 * 1024, o.partSize ?? PART_SIZE);
  }

  close(): Promise<void> {
    this.client.destroy();
    return Promise.resolve();
  }

  private objectKey(key: string): string {
    checkBlobKey(key);
    return this.spec.prefix ? `${this.spec.prefix}/${key}` : key;
  }

  private blobKey(objectKey: string): string {
    return this.spec.prefix ? objectKey.slice(this.spec.prefix.length + 1) : objectKey;
  }

  private async run<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      throw asStorage(e, what);
    }
  }

  async put(key: string, data: Buffer | Uint8Array | string | Readable): Promise<BlobStat> {
    const Key = this.objectKey(key);
    const Bucket = this.spec.bucket;
    if (!(data instanceof Readable)) {
      const body = typeof data === 'string' ? Buffer.from(data) : data;
      if (body.length < MULTIPART_THRESHOLD) {
        await this.run(`writing blob ${key}`, () => this.client.send(new PutObjectCommand({ Bucket, Key, Body: body, ContentLength: body.length })));
        return { size: body.length };
      }
      return this.upload(key, Key, body, body.length);
    }
    return this.upload(key, Key, data, undefined);
  }

  private async upload(key: string, Key: string, body: Buffer | Uint8Array | Readable, known: number | undefined): Promise<BlobStat> {
    let size = known ?? 0;
    let source: Buffer | Uint8Array | Readable = body;
    if (known === undefined && body instanceof Readable) {
      // count what goes up (the stream's length is not known before)
      const counter = new Transform({
        transform(chunk: Buffer, _enc, cb) {
          size += chunk.length;
          cb(null, chunk);
        },
      });
      body.on('error', (e) => counter.destroy(e));
      source = body.pipe(counter);
    }
    const up = new Upload({ client: this.client, params: { Bucket: this.spec.bucket, Key, Body: source }, queueSize: this.queueSize, partSize: this.partSize, leavePartsOnError: false });
    await this.run(`writing blob ${key}`, () => up.done());
    return { size };
  }

  async putFile(key: string, filePath: string): Promise<BlobStat> {
    const { size } = await fsp.stat(filePath);
    if (size < MULTIPART_THRESHOLD) return this.put(key, await fsp.readFile(filePath));
    const stat = await this.upload(key, this.objectKey(key), fs.createReadStream(filePath), size);
    return stat;
  }

  async getStream(key: string, range?: { start: number; end?: number }): Promise<Readable> {
    const Key = this.objectKey(key);
    const Range = range ? `bytes=${range.start}-${range.end ?? ''}` : undefined;
    try {
      const r = await this.client.send(new GetObjectCommand({ Bucket: this.spec.bucket, Key, ...(Range ? { Range } : {}) }));
      return r.Body as Readable;
    } catch (e) {
      if (isMissing(e)) throw new NotFoundError(`blob ${key} not found`);
      // a range past the end: nothing to read
      if (status(e) === 416) return Readable.from([]);
      throw asStorage(e, `reading blob ${key}`);
    }
  }

  async getBuffer(key: string): Promise<Buffer> {
    const chunks: Buffer[] = [];
    const s = await this.getStream(key);
    await this.run(`reading blob ${key}`, async () => {
      for await (const c of s) chunks.push(c as Buffer);
    });
    return Buffer.concat(chunks);
  }

  async getToFile(key: string, filePath: string): Promise<void> {
    const src = await this.getStream(key);
    await this.run(`reading blob ${key}`, () => writeStreamToFile(src, filePath));
  }

  localPath(): undefined {
    return undefined;
  }

  async stat(key: string): Promise<BlobStat | undefined> {
    const Key = this.objectKey(key);
    try {
      const h = await this.client.send(new HeadObjectCommand({ Bucket: this.spec.bucket, Key }));
      return { size: h.ContentLength ?? 0 };
    } catch (e) {
      if (isMissing(e)) return undefined;
      throw asStorage(e, `reading blob ${key}`);
    }
  }

  async has(key: string): Promise<boolean> {
    return (await this.stat(key)) !== undefined;
  }

  async delete(key: string): Promise<void> {
    const Key = this.objectKey(key);
    await this.run(`deleting blob ${key}`, () => this.client.send(new DeleteObjectCommand({ Bucket: this.spec.bucket, Key })));
  }

  /** Object keys (with the store's prefix) under `prefix`, page by page. */
  private async *objectKeys(prefix: string): AsyncGenerator<string[]> {
    const Prefix = this.spec.prefix ? `${this.spec.prefix}/${prefix}` : prefix;
    let token: string | undefined;
    do {
      const page = await this.run(`listing blobs ${prefix}`, () => this.client.send(new ListObjectsV2Command({ Bucket: this.spec.bucket, Prefix, ...(token ? { ContinuationToken: token } : {}) })));
      yield (page.Contents ?? []).map((o) => o.Key!).filter(Boolean);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  async deletePrefix(prefix: string): Promise<void> {
    for await (const keys of this.objectKeys(prefix)) {
      for (let i = 0; i < keys.length; i += 1000) {
        const batch = keys.slice(i, i + 1000);
        if (batch.length) await this.run(`deleting blobs ${prefix}`, () => this.client.send(new DeleteObjectsCommand({ Bucket: this.spec.bucket, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } })));
      }
    }
  }

  async list(prefix: string): Promise<string[]> {
    const out: string[] = [];
    for await (const keys of this.objectKeys(prefix)) out.push(...keys.map((k) => this.blobKey(k)));
    return out.sort();
  }

  /**
   * Abort multipart uploads under the store's prefix started more than `olderThanMs` ago (a
   * process killed during an upload leaves its parts behind). Best effort: a server without
   * ListMultipartUploads is left alone. Returns how many were aborted.
   */
  async abortStaleUploads(olderThanMs = 24 * 3600_000): Promise<number> {
    let aborted = 0;
    try {
      const r = await this.client.send(new ListMultipartUploadsCommand({ Bucket: this.spec.bucket, ...(this.spec.prefix ? { Prefix: `${this.spec.prefix}/` } : {}) }));
      for (const u of r.Uploads ?? []) {
        if (!u.Key || !u.UploadId || !u.Initiated || Date.now() - u.Initiated.getTime() < olderThanMs) continue;
        await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.spec.bucket, Key: u.Key, UploadId: u.UploadId }));
        aborted++;
      }
    } catch {
      /* best effort */
    }
    return aborted;
  }
}
