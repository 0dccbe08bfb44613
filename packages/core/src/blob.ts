/**
 * Blob store: every input and artifact of a job is a blob referenced by key
 * (e.g. `assets/ast_x/source.mp4`). Embedded mode keeps blobs in the data dir (FsBlobStore);
 * distributed mode uses the NATS object store (in @dub/worker) or a shared filesystem path.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { asStorageError, errnoOf, NotFoundError, ValidationError } from './errors.js';

export interface BlobStat {
  size: number;
}

export interface BlobStore {
  /** Store bytes or a stream under `key`, replacing any previous blob atomically. */
  put(key: string, data: Buffer | Uint8Array | string | Readable): Promise<BlobStat>;
  /**
   * Store the file at `filePath` under `key`. With `move`, the caller gives the file up: a store
   * on the same file system may take it as it is (a rename) instead of copying it.
   */
  putFile(key: string, filePath: string, opts?: { move?: boolean }): Promise<BlobStat>;
  /** A readable stream of the blob; NotFoundError when absent. Optional byte range (inclusive end). */
  getStream(key: string, range?: { start: number; end?: number }): Promise<Readable>;
  getBuffer(key: string): Promise<Buffer>;
  /** Copy the blob into a local file (ffmpeg needs a path). */
  getToFile(key: string, filePath: string): Promise<void>;
  /** A local path of the blob when the store is a filesystem (no copy needed), else undefined. */
  localPath(key: string): string | undefined;
  stat(key: string): Promise<BlobStat | undefined>;
  has(key: string): Promise<boolean>;
  delete(key: string): Promise<void>;
  /** Delete every blob whose key starts with `prefix`. */
  deletePrefix(prefix: string): Promise<void>;
  list(prefix: string): Promise<string[]>;
}

/** Write `src` to `filePath` through a temporary file renamed into place: no partial file is left where a reader looks. */
export async function writeStreamToFile(src: Readable, filePath: string): Promise<void> {
  await fsp.mkdir(path.dirname(filePath), { recursive: true });
  const tmp = `${filePath}.tmp-${randomBytes(6).toString('hex')}`;
  try {
    await pipeline(src, fs.createWriteStream(tmp));
    await fsp.rename(tmp, filePath);
  } catch (e) {
    await fsp.rm(tmp, { force: true });
    throw e;
  }
}

/** Keys are slash-separated segments of [A-Za-z0-9._-], no empty, "." or ".." segment. */
export function checkBlobKey(key: string): string {
  const ok = key.length > 0 && key.length <= 512 && key.split('/').every((s) => s.length > 0 && s !== '.' && s !== '..' && /^[A-Za-z0-9._=-]+$/.test(s));
  if (!ok) throw new ValidationError(`invalid blob key "${key}"`, { field: 'key' });
  return key;
}

/** A missing file or a path through a non-directory: the blob is absent (any other error is not). */
function isMissing(e: unknown): boolean {
  const c = errnoOf(e);
  return c === 'ENOENT' || c === 'ENOTDIR';
}

/**
 * Blobs as files under `root`. A missing file is a missing blob (undefined, false, NotFoundError);
 * any other failure of the disk (full, read-only, EIO, EACCES) is a StorageError (HTTP 503,
 * retryable), never "missing".
 */
export class FsBlobStore implements BlobStore {
  constructor(readonly root: string) {
    fs.mkdirSync(root, { recursive: true });
  }

  private file(key: string): string {
    return path.join(this.root, checkBlobKey(key));
  }

  /** Run a file-system operation; a disk fault becomes a StorageError saying what failed. */
  private async io<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      throw asStorageError(e, `blob store: ${what}`);
    }
  }

  private async tmpFor(target: string): Promise<string> {
    await fsp.mkdir(path.dirname(target), { recursive: true });
    return `${target}.tmp-${randomBytes(6).toString('hex')}`;
  }

  async put(key: string, data: Buffer | Uint8Array | string | Readable): Promise<BlobStat> {
    const target = this.file(key);
    return this.io(`writing ${key}`, async () => {
      const tmp = await this.tmpFor(target);
      const ws = data instanceof Readable ? fs.createWriteStream(tmp) : undefined;
      try {
        if (data instanceof Readable) await pipeline(data, ws!);
        else await fsp.writeFile(tmp, data);
        await fsp.rename(tmp, target);
      } catch (e) {
        // A source that fails at once can end the pipeline before the write stream has even
        // opened its file: wait for the stream to close, so the file is there to be removed.
        if (ws && !ws.closed) await new Promise<void>((resolve) => ws.once('close', () => resolve()));
        await fsp.rm(tmp, { force: true }).catch(() => undefined);
        throw e;
      }
      return { size: (await fsp.stat(target)).size };
    });
  }

  async putFile(key: string, filePath: string, opts: { move?: boolean } = {}): Promise<BlobStat> {
    const target = this.file(key);
    return this.io(`writing ${key}`, async () => {
      const tmp = await this.tmpFor(target);
      if (opts.move) {
        try {
          // atomic on one file system: the blob appears whole or not at all
          await fsp.rename(filePath, target);
          return { size: (await fsp.stat(target)).size };
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'EXDEV') throw e;
        }
      }
      try {
        await fsp.copyFile(filePath, tmp);
        await fsp.rename(tmp, target);
      } catch (e) {
        await fsp.rm(tmp, { force: true }).catch(() => undefined);
        throw e;
      }
      return { size: (await fsp.stat(target)).size };
    });
  }

  async getStream(key: string, range?: { start: number; end?: number }): Promise<Readable> {
    const f = this.file(key);
    if (!(await this.has(key))) throw new NotFoundError(`blob ${key} not found`);
    return fs.createReadStream(f, range ? { start: range.start, ...(range.end !== undefined ? { end: range.end } : {}) } : undefined);
  }

  async getBuffer(key: string): Promise<Buffer> {
    const f = this.file(key);
    try {
      return await fsp.readFile(f);
    } catch (e) {
      if (isMissing(e)) throw new NotFoundError(`blob ${key} not found`, { cause: e });
      throw asStorageError(e, `blob store: reading ${key}`);
    }
  }

  async getToFile(key: string, filePath: string): Promise<void> {
    if (!(await this.has(key))) throw new NotFoundError(`blob ${key} not found`);
    await this.io(`copying ${key} to a local file`, async () => {
      await fsp.mkdir(path.dirname(filePath), { recursive: true });
      await fsp.copyFile(this.file(key), filePath);
    });
  }

  localPath(key: string): string | undefined {
    return this.file(key);
  }

  /** undefined only when the blob is absent (ENOENT, ENOTDIR); other errors are thrown. */
  async stat(key: string): Promise<BlobStat | undefined> {
    const f = this.file(key);
    try {
      const s = await fsp.stat(f);
      return s.isFile() ? { size: s.size } : undefined;
    } catch (e) {
      if (isMissing(e)) return undefined;
      throw asStorageError(e, `blob store: reading ${key}`);
    }
  }

  async has(key: string): Promise<boolean> {
    return (await this.stat(key)) !== undefined;
  }

  async delete(key: string): Promise<void> {
    const f = this.file(key);
    await this.io(`deleting ${key}`, () => fsp.rm(f, { force: true }));
  }

  async deletePrefix(prefix: string): Promise<void> {
    for (const k of await this.list(prefix)) await this.delete(k);
  }

  async list(prefix: string): Promise<string[]> {
    const out: string[] = [];
    const walk = async (dir: string, rel: string): Promise<void> => {
      let entries: fs.Dirent[];
      try {
        entries = await fsp.readdir(dir, { withFileTypes: true });
      } catch (e) {
        if (isMissing(e)) return;
        throw asStorageError(e, `blob store: listing ${prefix || '/'}`);
      }
      for (const e of entries) {
        const r = rel ? `${rel}/${e.name}` : e.name;
        if (e.isDirectory()) await walk(path.join(dir, e.name), r);
        else if (e.isFile() && !e.name.includes('.tmp-') && r.startsWith(prefix)) out.push(r);
      }
    };
    const base = prefix.includes('/') ? prefix.slice(0, prefix.lastIndexOf('/')) : '';
    await walk(base ? path.join(this.root, base) : this.root, base);
    return out.sort();
  }
}
