import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FsBlobStore, loadConfig, type Job, type JobHandlers, type WorkerEvent } from '@dub/core';
import { createEmbeddedRuntime, type EmbeddedRuntime } from './embedded.js';
import { jobHandlers as control } from './testing/control-handlers.js';

const CONTROL_MODULE = path.resolve(import.meta.dirname, '../dist/testing/control-handlers.js');
const dirs: string[] = [];
const runtimes: EmbeddedRuntime[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((r) => r.close()));
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function tmp(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-embedded-'));
  dirs.push(d);
  return d;
}

function job(asset: string, id = `job-${asset}`): Job {
  return { v: 1, type: 'prepare-asset', job_id: id, asset_id: asset, locale: 'en-US', media: { blob: 'x' }, versions: [] };
}

function start(dataDir: string, o: { handlers?: JobHandlers; handlersModule?: string; concurrency?: number; maxDeliver?: number; drainTimeoutMs?: number } = {}): EmbeddedRuntime {
  const rt = createEmbeddedRuntime({
    dataDir,
    store: new FsBlobStore(path.join(dataDir, 'blobs')),
    config: loadConfig({}),
    backoffBaseMs: 20,
    backoffMaxMs: 100,
    drainTimeoutMs: o.drainTimeoutMs ?? 2000,
    ...(o.handlersModule ? { handlersModule: o.handlersModule } : { handlers: o.handlers ?? control }),
    ...(o.concurrency ? { concurrency: o.concurrency } : {}),
    ...(o.maxDeliver ? { maxDeliver: o.maxDeliver } : {}),
  });
  runtimes.push(rt);
  return rt;
}

async function collect(rt: EmbeddedRuntime): Promise<WorkerEvent[]> {
  const got: WorkerEvent[] = [];
  await rt.events.subscribe(async (e) => void got.push(e));
  return got;
}

describe('embedded runtime', () => {
  it('runs a job, delivers its events in order and removes the persisted job', async () => {
    const d = tmp();
    const rt = start(d);
    const got = await collect(rt);
    await rt.queue.enqueue(job('ok-1'));
    await rt.runner.idle();
    expect(got.map((e) => e.type)).toEqual(['stage_done', 'asset_prepared']);
    expect(got.every((e) => e.job_id === 'job-ok-1' && e.asset_id === 'ok-1' && e.v === 1)).toBe(true);
    expect(fs.readdirSync(path.join(d, 'queue/jobs'))).toEqual([]);
    expect(fs.readdirSync(path.join(d, 'queue/events'))).toEqual([]);
  });

  it('persists the job before enqueue resolves and runs a job_id once', async () => {
    const d = tmp();
    const rt = start(d);
    const a = rt.queue.enqueue(job('ok-2'));
    await a;
    await rt.queue.enqueue(job('ok-2'));
    const got = await collect(rt);
    await rt.runner.idle();
    await rt.queue.enqueue(job('ok-2'));
    await rt.runner.idle();
    expect(got.filter((e) => e.type === 'asset_prepared')).toHaveLength(1);
  });

  it('rejects an invalid job', async () => {
    const rt = start(tmp());
    await expect(rt.queue.enqueue({ v: 1, type: 'prepare-asset', job_id: 'j' } as unknown as Job)).rejects.toMatchObject({ code: 'validation_error' });
  });

  it('retries retryable errors with backoff, then succeeds', async () => {
    const rt = start(tmp());
    const got = await collect(rt);
    await rt.queue.enqueue(job('retry2-a'));
    await rt.runner.idle();
    expect(got.map((e) => e.type)).toEqual(['stage_done', 'asset_prepared']);
  });

  it('fails with the last error after maxDeliver deliveries', async () => {
    const rt = start(tmp(), { maxDeliver: 2 });
    const got = await collect(rt);
    await rt.queue.enqueue(job('retry5-b'));
    await rt.runner.idle();
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({ type: 'asset_failed', error: { error_code: 'processing_failed' } });
    expect((got[0] as { error: { detail: string } }).error.detail).toContain('delivery 2');
  });

  it('maps permanent errors to the failure event of the job type with the error code', async () => {
    const rt = start(tmp());
    const got = await collect(rt);
    await rt.queue.enqueue(job('fail-missing_audio_track-c'));
    await rt.queue.enqueue(job('boom-d'));
    await rt.queue.enqueue({ v: 1, type: 'prepare-version', job_id: 'pv', asset_id: 'fail-unsupported_language_pair-e', source_locale: 'en-US', version: { version_id: 'v1', dubbing_id: 'd1', locale: 'es-ES' } });
    await rt.queue.enqueue({ v: 1, type: 'generate-version', job_id: 'gv', asset_id: 'boom-f', version_id: 'v2', locale: 'es-ES', mode: 'no_lips', script_key: 'k', generation: 3, options: {} } as Job);
    await rt.runner.idle();
    const byAsset = Object.fromEntries(got.map((e) => [e.asset_id, e]));
    expect(byAsset['fail-missing_audio_track-c']).toMatchObject({ type: 'asset_failed', error: { error_code: 'missing_audio_track' } });
    expect(byAsset['boom-d']).toMatchObject({ type: 'asset_failed', error: { error_code: 'processing_failed' } });
    expect(byAsset['fail-unsupported_language_pair-e']).toMatchObject({ type: 'version_failed', version_id: 'v1', error: { error_code: 'unsupported_language_pair' } });
    expect(byAsset['boom-f']).toMatchObject({ type: 'version_generate_failed', version_id: 'v2', generation: 3, error: { error_code: 'general_error' } });
  });

  it('delivers an event again to a subscriber that threw, keeping the order', async () => {
    const rt = start(tmp());
    const got: string[] = [];
    let failures = 0;
    await rt.events.subscribe(async (e) => {
      if (e.type === 'stage_done' && failures < 2) {
        failures++;
        throw new Error('database busy');
      }
      got.push(e.type);
    });
    await rt.queue.enqueue(job('ok-g'));
    await rt.runner.idle();
    expect(failures).toBe(2);
    expect(got).toEqual(['stage_done', 'asset_prepared']);
  });

  it('re-runs persisted jobs and redelivers undelivered events after a restart', async () => {
    const d = tmp();
    const first = start(d, { drainTimeoutMs: 100 });
    await first.queue.enqueue(job('ok-h'));
    // No subscriber: the job finishes but its events stay persisted, and so does the job.
    await new Promise((r) => setTimeout(r, 200));
    await first.queue.enqueue(job('slow1500-i'));
    await new Promise((r) => setTimeout(r, 50));
    await first.close();
    expect(fs.readdirSync(path.join(d, 'queue/jobs')).sort()).toEqual(['job-ok-h.json', 'job-slow1500-i.json']);
    runtimes.splice(runtimes.indexOf(first), 1);
    const second = start(d);
    const got = await collect(second);
    await second.runner.idle();
    expect(got.filter((e) => e.asset_id === 'ok-h').map((e) => e.type)).toEqual(['stage_done', 'asset_prepared']);
    expect(got.filter((e) => e.asset_id === 'slow1500-i').map((e) => e.type)).toEqual(['stage_done', 'asset_prepared']);
    expect(fs.readdirSync(path.join(d, 'queue/jobs'))).toEqual([]);
  }, 20_000);

  it('enqueues follow-up jobs from a handler', async () => {
    const rt = start(tmp());
    const got = await collect(rt);
    await rt.queue.enqueue(job('follow-j'));
    await rt.runner.idle();
    expect(got.map((e) => `${e.job_id}:${e.type}`)).toEqual(['job-follow-j:stage_done', 'job-follow-j:asset_prepared', 'job-follow-j-v:stage_done', 'job-follow-j-v:version_prepared']);
  });

  it('runs a handlers module in worker threads, with per-stage limits across threads', async () => {
    const d = tmp();
    const rt = start(d, { handlersModule: CONTROL_MODULE, concurrency: 3 });
    const got = await collect(rt);
    for (const i of [1, 2, 3]) await rt.queue.enqueue(job(`limit150-${i}`));
    await rt.runner.idle();
    expect(got.filter((e) => e.type === 'asset_prepared')).toHaveLength(3);
    const spans = [1, 2, 3]
      .map((i) => JSON.parse(fs.readFileSync(path.join(d, 'blobs/limits', `job-limit150-${i}.json`), 'utf8')) as { start: number; end: number })
      .sort((a, b) => a.start - b.start);
    for (let i = 1; i < spans.length; i++) expect(spans[i].start).toBeGreaterThanOrEqual(spans[i - 1].end);
  });
});
