/**
 * Downloading and checking model files for `dub models fetch|verify`.
 *
 * A download goes to `<target>.part`: an interrupted one is resumed from there with an HTTP Range
 * request (a server that ignores the range starts it over), then the size and sha256 are checked
 * against the manifest (or, for files marked `"pin": "first-fetch"` whose publisher gives no
 * sha256, against the lock file written by their first fetch), and the md5 or CRC-32 where the
 * publisher gives one (Piper's voices.json, FaceFusion's `.hash` files). Only a file that passed is renamed
 * to `<target>`, where the resolver looks; one that failed its check is deleted.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { Crc32 } from './crc32.js';
import { pipeline } from 'node:stream/promises';

export interface Expected {
  sha256?: string;
  /** Published md5 (Piper's voices.json lists md5 and size, no sha256): checked beside the sha256 when given. */
  md5?: string;
  /** Published CRC-32, 8 hex digits (FaceFusion's `.hash` file beside each model): checked beside the sha256 when given. */
  crc32?: string;
  size?: number;
}

export async function sha256File(file: string): Promise<string> {
  return (await hashFile(file)).sha256;
}

/** sha256 and md5 of a file in one read, and its CRC-32 when asked for (it costs a pass in JavaScript). */
export async function hashFile(file: string, opts: { crc32?: boolean } = {}): Promise<{ sha256: string; md5: string; crc32?: string }> {
  const s = createHash('sha256');
  const m = createHash('md5');
  const c = opts.crc32 ? new Crc32() : undefined;
  for await (const chunk of fs.createReadStream(file, { highWaterMark: 1 << 20 })) {
    s.update(chunk as Buffer);
    m.update(chunk as Buffer);
    c?.update(chunk as Buffer);
  }
  return { sha256: s.digest('hex'), md5: m.digest('hex'), ...(c ? { crc32: c.hex() } : {}) };
}

/** What the lock file keeps of a file fetched without a published hash. */
export interface LockEntry {
  sha256: string;
  size: number;
  url: string;
  fetched_at: string;
}

/** `<models dir>/models.lock.json`: sha256 and size recorded by the first fetch of unpinned files, keyed `<id>/<file>`. */
export class ModelLock {
  private entries: Record<string, LockEntry>;
  constructor(readonly file: string) {
    this.entries = fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, LockEntry>) : {};
  }
  get(key: string): LockEntry | undefined {
    return this.entries[key];
  }
  async set(key: string, e: LockEntry): Promise<void> {
    this.entries[key] = e;
    await fsp.mkdir(path.dirname(this.file), { recursive: true });
    await fsp.writeFile(`${this.file}.tmp`, JSON.stringify(this.entries, null, 2) + '\n');
    await fsp.rename(`${this.file}.tmp`, this.file);
  }
}

export class CheckError extends Error {}

/** Checks a downloaded file; throws CheckError naming what differs. */
export async function checkFile(file: string, expected: Expected): Promise<{ sha256: string; size: number }> {
  const size = (await fsp.stat(file)).size;
  if (expected.size !== undefined && size !== expected.size) throw new CheckError(`size ${size} bytes, expected ${expected.size}`);
  const { sha256, md5, crc32 } = await hashFile(file, { crc32: expected.crc32 !== undefined });
  if (expected.sha256 && sha256 !== expected.sha256) throw new CheckError(`sha256 ${sha256}, expected ${expected.sha256}`);
  if (expected.md5 && md5 !== expected.md5) throw new CheckError(`md5 ${md5}, expected ${expected.md5}`);
  if (expected.crc32 && crc32 !== expected.crc32.toLowerCase()) throw new CheckError(`crc32 ${crc32}, expected ${expected.crc32}`);
  return { sha256, size };
}

export interface DownloadOptions {
  /** Called with bytes so far and the total when known. */
  onProgress?: (done: number, total: number | undefined) => void;
  fetchImpl?: typeof fetch;
}

/**
 * Downloads `url` into `target` (resuming `<target>.part`), checks it against `expected`, and
 * moves it into place. A failed check deletes the partial file and throws CheckError; a network
 * failure keeps it for the next run to resume and throws.
 */
export async function downloadVerified(url: string, target: string, expected: Expected, opts: DownloadOptions = {}): Promise<{ sha256: string; size: number; resumedFrom: number }> {
  const part = `${target}.part`;
  await fsp.mkdir(path.dirname(target), { recursive: true });
  let have = fs.existsSync(part) ? (await fsp.stat(part)).size : 0;
  if (expected.size !== undefined && have > expected.size) {
    await fsp.rm(part, { force: true });
    have = 0;
  }
  const doFetch = opts.fetchImpl ?? fetch;
  const res = await doFetch(url, { redirect: 'follow', headers: have > 0 ? { range: `bytes=${have}-` } : {} });
  if (res.status === 416 && have > 0) {
    // the partial file is already complete: check it
  } else {
    if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
    const resumed = res.status === 206 && have > 0;
    if (!resumed) have = 0;
    const length = Number(res.headers.get('content-length') ?? NaN);
    const total = Number.isFinite(length) ? length + have : expected.size;
    let done = have;
    const counter = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        done += chunk.length;
        opts.onProgress?.(done, total);
        cb(null, chunk);
      },
    });
    await pipeline(Readable.fromWeb(res.body as never), counter, fs.createWriteStream(part, { flags: resumed ? 'a' : 'w' }));
    if (Number.isFinite(length) && done !== total) throw new Error(`connection closed after ${done} of ${total} bytes (kept ${path.basename(part)} to resume)`);
  }
  const resumedFrom = have;
  try {
    const r = await checkFile(part, expected);
    await fsp.rename(part, target);
    return { ...r, resumedFrom };
  } catch (e) {
    if (e instanceof CheckError) await fsp.rm(part, { force: true });
    throw e;
  }
}
