/**
 * DUB_KEEP_MODELS (DubConfig.keepModels): where it is false (`dub run`'s default) the inline
 * executor releases the sessions a job loaded when the job ends, failed or not, so the next job
 * starts with none loaded; unset or true (`dub serve`, `dub worker`) they stay warm for it. A tiny
 * ONNX fixture stands in for a model.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FsBlobStore, loadConfig, ValidationError, type Job, type JobHandlers } from '@dub/core';
import { sessionCacheOf } from '@dub/onnx';
import { createEmbeddedRuntime, type EmbeddedRuntime } from './embedded.js';

const MODEL = path.resolve(import.meta.dirname, '../../asr/fixtures/speaker-embedding-tiny-test/embedding.onnx');
const dirs: string[] = [];
const runtimes: EmbeddedRuntime[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((r) => r.close()));
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const job = (asset: string): Job => ({ v: 1, type: 'prepare-asset', job_id: `job-${asset}`, asset_id: asset, locale: 'en-US', media: { blob: 'x' }, versions: [] });

/** Runs three jobs, each loading the model (the second failing after it); the sessions each job found loaded when it started. */
async function sessionsAtStart(env: Record<string, string>, concurrency = 1): Promise<number[]> {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-keep-models-'));
  dirs.push(d);
  const seen: number[] = [];
  const handlers = {
    'prepare-asset': async (j, rt) => {
      seen.push(rt.sessions.size);
      await sessionCacheOf(rt.sessions).get(MODEL);
      if (j.asset_id === 'b') throw new ValidationError('failed after loading');
      await rt.emit({ type: 'asset_prepared', duration: 1, source_video_key: `assets/${j.asset_id}/source.mp4`, transcript_key: `assets/${j.asset_id}/transcript.json` });
    },
  } as JobHandlers;
  const rt = createEmbeddedRuntime({ dataDir: d, store: new FsBlobStore(path.join(d, 'blobs')), config: loadConfig(env), handlers, concurrency, maxDeliver: 1 });
  runtimes.push(rt);
  const events: string[] = [];
  await rt.events.subscribe(async (e) => void events.push(e.type));
  for (const a of ['a', 'b', 'c']) {
    await rt.queue.enqueue(job(a));
    await rt.runner.idle();
  }
  expect(events).toEqual(['asset_prepared', 'asset_failed', 'asset_prepared']);
  return seen;
}

describe('DUB_KEEP_MODELS', () => {
  it('is read as 1/0, unset left to the command', () => {
    expect(loadConfig({}).keepModels).toBeUndefined();
    expect(loadConfig({ DUB_KEEP_MODELS: '1' }).keepModels).toBe(true);
    expect(loadConfig({ DUB_KEEP_MODELS: '0' }).keepModels).toBe(false);
    expect(() => loadConfig({ DUB_KEEP_MODELS: 'sometimes' })).toThrow(/DUB_KEEP_MODELS/);
  });

  it('0: each job starts with no session loaded, after a failed job too; unset or 1: the first job\'s stays warm', async () => {
    expect(await sessionsAtStart({ DUB_KEEP_MODELS: '0' })).toEqual([0, 0, 0]);
    expect(await sessionsAtStart({})).toEqual([0, 1, 1]);
    expect(await sessionsAtStart({ DUB_KEEP_MODELS: '1' })).toEqual([0, 1, 1]);
  });

  it('0 with inline jobs several at a time: kept (one job must not release what another runs)', async () => {
    expect(await sessionsAtStart({ DUB_KEEP_MODELS: '0' }, 2)).toEqual([0, 1, 1]);
  });
});
