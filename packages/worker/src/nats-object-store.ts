/**
 * BlobStore over the NATS object store (distributed mode): every worker host and the API read
 * and write blobs in one bucket (default `dub-blobs`) without a shared filesystem. Blob keys are
 * object names. `put` replaces an object atomically (readers see the old or the new object).
 */
import fs from 'node:fs';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { Objm, type ObjectStore } from '@nats-io/obj';
import { NotFoundError, checkBlobKey, writeStreamToFile, type BlobStat, type BlobStore } from '@dub/core';
import { closeNats } from './nats-connection.js';

export interface NatsObjectBlobStoreOptions {
  servers: string[];
  bucket?: string;
}

/** Passes bytes [start, end] (inclusive) of a stream. */
class ByteRange extends Transform {
  private pos = 0;
  constructor(private readonly first: number, private readonly last: number) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    const from = Math.max(0, this.first - this.pos);
    const to = Math.min(chunk.length, this.last - this.pos + 1);
    this.pos += chunk.length;
    if (to > from) this.push(chunk.subarray(from, to));
    cb();
  }
}

export class NatsObjectBlobStore implements BlobStore {
  /** Its BlobStoreSpec (store-spec.ts, which imports this module on first use). */
  readonly spec: { kind: 'nats'; servers: string[]; bucket: string };

  private constructor(
    private readonly os: ObjectStore,
    private readonly nc: NatsConnection | undefined,
    servers: string[],
    bucket: string,
  ) {
    this.spec = { kind: 'nats', servers, bucket };
  }

  /** Connect to NATS and open (or create) the bucket; `close()` closes the connection. */
  static async connect(o: NatsObjectBlobStoreOptions): Promise<NatsObjectBlobStore> {
    const nc = await connect({ servers: o.servers, maxReconnectAttempts: -1, reconnectTimeWait: 500, name: 'dub-blobs' });
    try {
      const bucket = o.bucket ?? 'dub-blobs';
      const os = await new Objm(nc).create(bucket, { storage: 'file' });
      return new NatsObjectBlobStore(os, nc, o.servers, bucket);
    } catch (e) {
      await closeNats(nc, 0);
      throw e;
    }
  }

  /** Use an existing connection (not closed by `close()`); `servers` lets worker threads reopen it. */
  static async open(nc: NatsConnection, bucket = 'dub-blobs', servers: string[] = []): Promise<NatsObjectBlobStore> {
    const os = await new Objm(nc).create(bucket, { storage: 'file' });
    return new NatsObjectBlobStore(os, undefined, servers, bucket);
  }

  /** Close the connection `connect()` opened, within 2 s even with the server unreachable. */
  async close(): Promise<void> {
    if (this.nc) await closeNats(this.nc);
  }

  async put(key: string, data: Buffer | Uint8Array | string | Readable): Promise<BlobStat> {
    checkBlobKey(key);
    if (data instanceof Readable) {
      const info = await this.os.put({ name: key }, Readable.toWeb(data) as ReadableStream<Uint8Array>);
      return { size: info.size };
    }
    const bytes = typeof data === 'string' ? Buffer.from(data) : data;
    const info = await this.os.putBlob({ name: key }, bytes);
    return { size: info.size };
  }

  putFile(key: string, filePath: string): Promise<BlobStat> {
    return this.put(key, fs.createReadStream(filePath));
  }

  async getStream(key: string, range?: { start: number; end?: number }): Promise<Readable> {
    checkBlobKey(key);
    const r = await this.os.get(key);
    if (!r || r.info.deleted) throw new NotFoundError(`blob ${key} not found`);
    const body = Readable.fromWeb(r.data as never);
    r.error.then((e) => e && body.destroy(e)).catch(() => undefined);
    if (!range) return body;
    const out = new ByteRange(range.start, range.end ?? Number.MAX_SAFE_INTEGER);
    body.on('error', (e) => out.destroy(e));
    return body.pipe(out);
  }

  async getBuffer(key: string): Promise<Buffer> {
    checkBlobKey(key);
    const b = await this.os.getBlob(key);
    if (!b) throw new NotFoundError(`blob ${key} not found`);
    return Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  }

  async getToFile(key: string, filePath: string): Promise<void> {
    await writeStreamToFile(await this.getStream(key), filePath);
  }

  localPath(): undefined {
    return undefined;
  }

  async stat(key: string): Promise<BlobStat | undefined> {
    checkBlobKey(key);
    const i = await this.os.info(key);
    return i && !i.deleted ? { size: i.size } : undefined;
  }

  async has(key: string): Promise<boolean> {
    return (await this.stat(key)) !== undefined;
  }

  async delete(key: string): Promise<void> {
    checkBlobKey(key);
    await this.os.delete(key);
  }

  async deletePrefix(prefix: string): Promise<void> {
    for (const k of await this.list(prefix)) await this.delete(k);
  }

  async list(prefix: string): Promise<string[]> {
    const all = await this.os.list();
    return all.filter((i) => !i.deleted && i.name.startsWith(prefix)).map((i) => i.name).sort();
  }
}
