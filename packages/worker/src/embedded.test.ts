import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { FsBlobStore, loadConfig, type Job, type JobHandlers, type Logger, type WorkerEvent } from '@dub/core';
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

function start(dataDir: string, o: { handlers?: JobHandlers; handlersModule?: string; concurrency?: number; maxDeliver?: number; drainTimeoutMs?: number; logger?: Logger } = {}): EmbeddedRuntime {
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
    ...(o.logger ? { logger: o.logger } : {}),
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

describe('embedded runtime on a failing disk', () => {
  // @ts-expect-error plain JavaScript test support (no types)
  const load = () => import('../../../test/support/disk-faults.mjs') as Promise<{ installDiskFaults: () => DiskFaults }>;
  interface DiskFaults {
    set(spec: { under: string[]; code: string; ops?: string[] }): void;
    clear(): void;
    uninstall(): void;
    readonly hits: number;
  }
  let faults: DiskFaults;
  const unhandled: unknown[] = [];
  const onUnhandled = (e: unknown) => void unhandled.push(e);
  beforeEach(async () => {
    faults = (await load()).installDiskFaults();
    unhandled.length = 0;
    process.on('unhandledRejection', onUnhandled);
  });
  afterEach(() => {
    faults.uninstall();
    process.off('unhandledRejection', onUnhandled);
  });

  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  /** idle(), or a failure naming what is stuck when it does not come within `ms`. */
  async function settled(rt: EmbeddedRuntime, ms = 8000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const stuck = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`queue not idle after ${ms} ms: ${rt.runner.size} job(s), ${rt.runner.pendingEvents} event(s) left (a stranded job)`)), ms)));
    try {
      await Promise.race([rt.runner.idle(), stuck]);
    } finally {
      clearTimeout(timer);
    }
  }
  const leftIn = (d: string) => [...fs.readdirSync(path.join(d, 'queue/jobs')), ...fs.readdirSync(path.join(d, 'queue/events'))];

  it('enqueue on a full disk rejects with a StorageError (503, retryable) and keeps nothing', async () => {
    const d = tmp();
    const rt = start(d);
    faults.set({ under: [path.join(d, 'queue')], code: 'ENOSPC' });
    await expect(rt.queue.enqueue(job('ok-full'))).rejects.toMatchObject({ code: 'storage_unavailable', status: 503, retryable: true, errno: 'ENOSPC' });
    expect(rt.runner.size).toBe(0);
    faults.clear();
    const got = await collect(rt);
    await rt.queue.enqueue(job('ok-full'));
    await settled(rt);
    expect(got.map((e) => e.type)).toEqual(['stage_done', 'asset_prepared']);
    expect(leftIn(d)).toEqual([]);
    expect(unhandled).toEqual([]);
  });

  it('queues a job again whose failure event cannot be written, and writes it once the disk is back', async () => {
    const d = tmp();
    const rt = start(d);
    const got = await collect(rt);
    faults.set({ under: [path.join(d, 'queue/events')], code: 'ENOSPC' });
    await rt.queue.enqueue(job('fail-missing_audio_track-ev'));
    await sleep(700);
    expect(faults.hits).toBeGreaterThan(1);
    expect(got).toEqual([]);
    expect(rt.runner.size).toBe(1);
    faults.clear();
    await settled(rt);
    expect(got.map((e) => e.type)).toEqual(['asset_failed']);
    expect(got[0]).toMatchObject({ error: { error_code: 'missing_audio_track' } });
    expect(leftIn(d)).toEqual([]);
    expect(unhandled).toEqual([]);
  });

  it('runs a job again whose success event cannot be written, without spending its deliveries', async () => {
    const d = tmp();
    const rt = start(d, { maxDeliver: 2 });
    const got = await collect(rt);
    faults.set({ under: [path.join(d, 'queue/events')], code: 'EROFS' });
    await rt.queue.enqueue(job('ok-ro'));
    await sleep(800);
    expect(faults.hits).toBeGreaterThan(3);
    expect(got).toEqual([]);
    faults.clear();
    await settled(rt);
    expect(got.map((e) => e.type)).toEqual(['stage_done', 'asset_prepared']);
    expect(leftIn(d)).toEqual([]);
    expect(unhandled).toEqual([]);
  });

  it('survives a read-only queue while starting, finishing and removing files, and loses no job', async () => {
    const d = tmp();
    const logs: { msg: string }[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void logs.push(JSON.parse(line) as { msg: string }) }) as unknown as Logger;
    const rt = start(d, { logger });
    const got = await collect(rt);
    const said = (text: string) => logs.some((l) => l.msg.includes(text));
    await rt.queue.enqueue(job('slow300-ro'));
    // Queued behind the first (concurrency 1): it has to record its start on the read-only disk.
    await rt.queue.enqueue(job('slow50-start'));
    await sleep(100);
    // The first job runs; recording it finished, its events and removing its files all fail.
    faults.set({ under: [path.join(d, 'queue')], code: 'EROFS' });
    await sleep(1000);
    expect(rt.runner.size).toBe(2);
    expect(said('job could not be recorded on disk; queued again')).toBe(true);
    expect(said('the queue could not write what the job produced')).toBe(true);
    faults.clear();
    await settled(rt);
    for (const a of ['slow300-ro', 'slow50-start']) expect(got.filter((e) => e.asset_id === a).map((e) => e.type)).toEqual(['stage_done', 'asset_prepared']);
    expect(leftIn(d)).toEqual([]);

    // Delivered events and finished jobs whose files cannot be removed are removed later.
    faults.set({ under: [path.join(d, 'queue')], code: 'EROFS', ops: ['rm'] });
    await rt.queue.enqueue(job('ok-rm'));
    await sleep(500);
    expect(got.filter((e) => e.asset_id === 'ok-rm').map((e) => e.type)).toEqual(['stage_done', 'asset_prepared']);
    expect(leftIn(d).length).toBeGreaterThan(0);
    expect(said('could not remove a')).toBe(true);
    faults.clear();
    await settled(rt);
    expect(leftIn(d)).toEqual([]);
    expect(unhandled).toEqual([]);
  }, 30_000);
});
