/**
 * The source audio's waveform for the studio's timeline (GET /v1/versions/{id}/waveform): the
 * peak and RMS level of every 20 ms of the asset's source video, computed once with ffmpeg
 * (@dub/media computeWaveform) and kept as a blob per asset, so every version of the asset and
 * every later request reads the blob. The source of an asset never changes, so neither does its
 * waveform. Concurrent requests for one asset share one computation; at most two computations
 * run at once per process (each is one ffmpeg decoding the whole audio track).
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { BlobStore, Logger, WaveformBody } from '@dub/core';
import { computeWaveform, WAVEFORM_DEFAULT_RATE, WAVEFORM_FLOOR_DB, type Waveform } from '@dub/media';

/** Bumped when the format of the body changes (older blobs are then recomputed). */
export const WAVEFORM_FORMAT = 1;

/** Blob key of an asset's waveform body. */
export const waveformKey = (assetId: string): string => `assets/${assetId}/waveform-v${WAVEFORM_FORMAT}-${WAVEFORM_DEFAULT_RATE}.json`;

export function waveformBody(assetId: string, w: Waveform): WaveformBody {
  return {
    asset_id: assetId,
    rate: w.rate,
    duration: Math.round(w.duration * 1e6) / 1e6,
    count: w.peak.length,
    encoding: 'u8-db',
    floor_db: WAVEFORM_FLOOR_DB,
    peak: Buffer.from(w.peak).toString('base64'),
    rms: Buffer.from(w.rms).toString('base64'),
  };
}

const MAX_RUNNING = 2;
/** An hour of media decodes in well under a minute; this bounds a stuck ffmpeg. */
const TIMEOUT_MS = 20 * 60_000;

export class WaveformCache {
  private readonly inflight = new Map<string, Promise<Buffer>>();
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly store: BlobStore,
    private readonly log: Logger,
  ) {}

  /** The body (JSON bytes) of the asset's waveform: the stored blob, or computed from `sourceKey` and stored. */
  async get(assetId: string, sourceKey: string): Promise<Buffer> {
    const key = waveformKey(assetId);
    if (await this.store.has(key)) return this.store.getBuffer(key);
    let p = this.inflight.get(assetId);
    if (!p) {
      p = this.compute(assetId, sourceKey, key).finally(() => this.inflight.delete(assetId));
      this.inflight.set(assetId, p);
    }
    return p;
  }

  private async compute(assetId: string, sourceKey: string, key: string): Promise<Buffer> {
    await this.slot();
    let tmp: string | undefined;
    try {
      let file = this.store.localPath(sourceKey);
      if (!file) {
        tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'dub-waveform-'));
        file = path.join(tmp, 'source.mp4');
        await this.store.getToFile(sourceKey, file);
      }
      const t0 = Date.now();
      const w = await computeWaveform(file, { timeoutMs: TIMEOUT_MS });
      const body = Buffer.from(JSON.stringify(waveformBody(assetId, w)));
      await this.store.put(key, body);
      this.log.info({ asset_id: assetId, seconds: w.duration, windows: w.peak.length, ms: Date.now() - t0 }, 'waveform computed');
      return body;
    } finally {
      if (tmp) await fs.rm(tmp, { recursive: true, force: true }).catch(() => undefined);
      this.release();
    }
  }

  private slot(): Promise<void> {
    if (this.running < MAX_RUNNING) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }
}
