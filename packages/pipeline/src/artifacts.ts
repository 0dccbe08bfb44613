/**
 * Resumable stages. Each stage's output is stored in the blob store under a key derived from the
 * stage name and a hash of its inputs and options; a `manifest.json` written last marks the
 * output complete. Running a stage whose manifest exists returns the stored output without
 * running it, so a redelivered or revised job resumes after its last finished stage.
 */
import { createHash } from 'node:crypto';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { blobKeys, type BlobStore, type StageContext, throwIfAborted } from '@dub/core';

/** JSON with object keys sorted, so equal inputs hash equally. */
export function canonicalJson(v: unknown): string {
  if (v === undefined) return 'null';
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
    .join(',')}}`;
}

export function inputsHash(v: unknown): string {
  return createHash('sha256').update(canonicalJson(v)).digest('hex').slice(0, 20);
}

export interface StageOutput {
  /** A private local directory for the stage's files. */
  readonly dir: string;
  /** Keep `localPath` as output file `name` (stored in the blob store when the stage succeeds). */
  addFile(name: string, localPath: string): void;
}

export interface StageResult<T> {
  value: T;
  /** Output file name -> blob key. */
  files: Record<string, string>;
  cached: boolean;
  key: string;
}

interface Manifest<T> {
  stage: string;
  hash: string;
  value: T;
  files: Record<string, string>;
  created_at: string;
}

export interface StageDone {
  stage: string;
  cached: boolean;
  seconds: number;
}

export class ArtifactCache {
  constructor(
    readonly store: BlobStore,
    readonly assetId: string,
    private readonly opts: { tmpDir?: string; onStageDone?: (d: StageDone) => void } = {},
  ) {}

  manifestKey(stage: string, hash: string): string {
    return blobKeys.artifact(this.assetId, stage, hash, 'manifest.json');
  }

  /** The stored result of `stage` for `inputs`, if it finished before. */
  async lookup<T>(stage: string, inputs: unknown): Promise<StageResult<T> | undefined> {
    const hash = inputsHash({ stage, inputs });
    const key = this.manifestKey(stage, hash);
    if (!(await this.store.has(key))) return undefined;
    const m = JSON.parse((await this.store.getBuffer(key)).toString('utf8')) as Manifest<T>;
    return { value: m.value, files: m.files, cached: true, key };
  }

  /** Run `produce` unless a stored output for (stage, inputs) exists. */
  async run<T>(stage: string, inputs: unknown, ctx: StageContext, produce: (out: StageOutput) => Promise<T>): Promise<StageResult<T>> {
    throwIfAborted(ctx.signal);
    const t0 = performance.now();
    const hit = await this.lookup<T>(stage, inputs);
    if (hit) {
      ctx.logger.debug({ stage, key: hit.key }, 'stage output found; skipped');
      this.opts.onStageDone?.({ stage, cached: true, seconds: (performance.now() - t0) / 1000 });
      return hit;
    }
    const hash = inputsHash({ stage, inputs });
    const dir = await fsp.mkdtemp(path.join(this.opts.tmpDir ?? os.tmpdir(), `dub-${stage}-`));
    const pending = new Map<string, string>();
    try {
      const value = await produce({ dir, addFile: (name, localPath) => void pending.set(name, localPath) });
      throwIfAborted(ctx.signal);
      const files: Record<string, string> = {};
      const uses = new Map<string, number>();
      for (const local of pending.values()) uses.set(path.resolve(local), (uses.get(path.resolve(local)) ?? 0) + 1);
      for (const [name, local] of pending) {
        const key = blobKeys.artifact(this.assetId, stage, hash, name);
        // a file the stage wrote in its own directory (once) is moved into the store: that directory is removed next
        const own = path.relative(dir, path.resolve(local));
        const move = !own.startsWith('..') && !path.isAbsolute(own) && uses.get(path.resolve(local)) === 1;
        await this.store.putFile(key, local, { move });
        files[name] = key;
      }
      const key = this.manifestKey(stage, hash);
      const manifest: Manifest<T> = { stage, hash, value, files, created_at: new Date().toISOString() };
      await this.store.put(key, Buffer.from(JSON.stringify(manifest)));
      const seconds = (performance.now() - t0) / 1000;
      ctx.logger.info({ stage, seconds: Number(seconds.toFixed(3)) }, 'stage done');
      this.opts.onStageDone?.({ stage, cached: false, seconds });
      return { value, files, cached: false, key };
    } finally {
      await fsp.rm(dir, { recursive: true, force: true });
    }
  }
}

/**
 * Files kept per asset under their own content key (`<stage>-<key>/<name>`), outside any stage's
 * manifest: the chunks of the dubbed track and of the lips video, reused by every later generate
 * whose chunk has the same key. `local` gives a local path of a blob.
 */
export function keyedFiles(store: BlobStore, assetId: string, stage: string, name: string, local: (key: string) => Promise<string>): { get(key: string): Promise<string | undefined>; put(key: string, file: string): Promise<void> } {
  const blob = (k: string) => blobKeys.artifact(assetId, stage, k, name);
  return {
    get: async (k) => ((await store.has(blob(k))) ? local(blob(k)) : undefined),
    put: async (k, file) => {
      await store.putFile(blob(k), file);
    },
  };
}
