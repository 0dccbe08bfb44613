/**
 * Local paths of blobs for tools that need files (ffmpeg, apertium, ONNX stages): the blob's own
 * file when the store is a filesystem, else a copy in the job's work directory (made once).
 */
import { access } from 'node:fs/promises';
import path from 'node:path';
import type { BlobStore } from '@dub/core';

export class LocalFiles {
  private readonly copies = new Map<string, Promise<string>>();

  constructor(
    private readonly store: BlobStore,
    private readonly workDir: string,
  ) {}

  path(key: string): Promise<string> {
    let p = this.copies.get(key);
    if (!p) {
      p = this.materialize(key);
      this.copies.set(key, p);
      p.catch(() => this.copies.delete(key));
    }
    return p;
  }

  private async materialize(key: string): Promise<string> {
    const direct = this.store.localPath(key);
    if (direct) {
      try {
        await access(direct);
        return direct;
      } catch {
        /* not on this filesystem: copy */
      }
    }
    const file = path.join(this.workDir, 'blobs', key.replace(/\//g, '__'));
    await this.store.getToFile(key, file);
    return file;
  }
}

/** Copy a blob to another key (stream, no full buffering). */
export async function copyBlob(store: BlobStore, from: string, to: string): Promise<void> {
  await store.put(to, await store.getStream(from));
}
