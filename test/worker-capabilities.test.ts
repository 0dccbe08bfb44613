/**
 * Know before working over NATS (issue 23 item 3), against a real nats-server: each worker
 * publishes what it serves to a JetStream key-value bucket with a heartbeat; the API's
 * FleetCapabilities checks a pair against the live workers (accepting while none has reported);
 * a job with a locale that is not the contract's fails invalid_input on arrival, before any stage.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { FsBlobStore, loadConfig, silentLogger, type Job, type WorkerEvent } from '@dub/core';
import { engineChoiceFromEnv, PairChecker, pairRefusalMessage } from '@dub/pipeline';
import { loadTranslateConfig } from '@dub/translate';
import { CapabilityPublisher, FleetCapabilities, NatsEventFeed, NatsJobQueue, WorkerDaemon, type NatsNames, type WorkerCapabilities } from '@dub/worker';
import { natsForTests } from '../packages/worker/src/testing/nats-server.js';
import { EventLog, makeClip } from '../packages/worker/src/testing/harness.js';

const FFMPEG_HANDLERS = path.resolve(import.meta.dirname, '../packages/worker/dist/testing/ffmpeg-handlers.js');
const apertium = ['/usr/bin/apertium', '/usr/local/bin/apertium'].some((f) => fs.existsSync(f));

let nats: { url: string; dispose(): Promise<void> };
let nc: NatsConnection;
let tmp: string;
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  nats = await natsForTests();
  nc = await connect({ servers: nats.url });
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-caps-'));
});
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
  await nc?.close();
  await nats?.dispose();
  fs.rmSync(tmp, { recursive: true, force: true });
});

function uniqueNames(): NatsNames {
  const id = randomBytes(4).toString('hex');
  const names = { jobsStream: `T_JOBS_${id}`, eventsStream: `T_EVENTS_${id}`, jobsPrefix: `t${id}.jobs`, eventsPrefix: `t${id}.events`, workerConsumer: 'w', eventsConsumer: 'api', capabilitiesBucket: `t-caps-${id}` };
  cleanups.push(async () => {
    const jsm = await jetstreamManager(nc);
    for (const s of [names.jobsStream, names.eventsStream, `KV_${names.capabilitiesBucket}`]) await jsm.streams.delete(s).catch(() => undefined);
  });
  return names;
}

async function record(bucket: string, key: string): Promise<WorkerCapabilities | undefined> {
  const e = await (await new Kvm(nc).open(bucket)).get(key);
  return e && e.operation === 'PUT' ? e.json<WorkerCapabilities>() : undefined;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('worker capabilities in a JetStream key-value bucket', () => {
  it.skipIf(!apertium)('a worker publishes what its engines serve; the fleet check accepts before any report, then refuses what no live worker serves (apertium needed)', async () => {
    const { capabilitiesBucket: bucket } = uniqueNames();
    const fleet = await FleetCapabilities.open(nc, { bucket, refreshMs: 0 });
    const deDE = { source: 'en-US', targets: [{ locale: 'es-ES' }, { locale: 'de-DE' }] };
    // no worker has reported: accepted (the worker checks on arrival)
    expect(await fleet.check(deDE)).toBeUndefined();

    const dir = fs.mkdtempSync(path.join(tmp, 'apertium-'));
    fs.mkdirSync(path.join(dir, 'modes'));
    for (const m of ['eng-spa', 'spa-eng_US']) fs.writeFileSync(path.join(dir, 'modes', `${m}.mode`), '');
    const checker = new PairChecker({ choice: engineChoiceFromEnv({ DUB_ASR_ENGINE: 'pocketsphinx', DUB_TTS_ENGINE: 'espeak-ng' }), translate: { ...loadTranslateConfig({}), apertium: { bin: 'apertium', dataDir: dir, pivot: 'spa' } }, modelsDir: dir });
    const pub = await CapabilityPublisher.start(nc, { bucket, workerId: 'w-cpu-1', heartbeatMs: 300, device: 'cpu', handlers: '@dub/pipeline', serves: () => checker.capabilities(), logger: silentLogger });
    cleanups.push(() => pub.stop());
    const first = (await record(bucket, 'w-cpu-1'))!;
    expect(first).toMatchObject({ v: 1, worker_id: 'w-cpu-1', device: 'cpu', handlers: '@dub/pipeline', serves: 'known', ttl_ms: 900, sources: { 'en-US': 'pocketsphinx' } });
    expect(first.targets!['es-ES']).toBe('espeak-ng');
    expect(first.pairs!['en-US>es-ES']).toBe('apertium');
    expect(first.pairs!['en-US>en-US']).toBe('none');
    expect(first.pairs!['en-US>de-DE']).toBeUndefined();

    // the heartbeat puts it again
    await sleep(800);
    const later = (await record(bucket, 'w-cpu-1'))!;
    expect(Date.parse(later.at)).toBeGreaterThan(Date.parse(first.at));
    expect(later.started_at).toBe(first.started_at);

    // what the live worker serves is accepted; what it does not is refused, naming the stage and the worker
    expect(await fleet.check({ source: 'en-US', targets: [{ locale: 'es-ES' }] })).toBeUndefined();
    const r = await fleet.check(deDE);
    expect(r).toMatchObject({ stage: 'translation', field: 'languages[1].locale', source: 'en-US', target: 'de-DE' });
    expect(pairRefusalMessage(r!)).toMatch(/^languages\[1\]\.locale: en-US -> de-DE is not supported for its role \(target\) here: translation: no live worker translates en-US -> de-DE \(1 live worker: w-cpu-1 \(cpu\)\); to fix: run a worker .*; or give the language a reference srt$/);
    expect(await fleet.check({ ...deDE, targets: [{ locale: 'de-DE', srt: true }] })).toBeUndefined();
    expect(await fleet.check({ source: 'de-DE', targets: [{ locale: 'es-ES' }] })).toMatchObject({ stage: 'speech recognition', field: 'locale' });

    // a record past its ttl is a dead worker's: with only such records, accepted again
    await pub.stop();
    expect(await record(bucket, 'w-cpu-1')).toBeUndefined();
    const kv = await new Kvm(nc).open(bucket);
    await kv.put('w-dead', JSON.stringify({ ...later, worker_id: 'w-dead', at: new Date(Date.now() - 5000).toISOString() }));
    expect(await fleet.live()).toEqual([]);
    expect(await fleet.check(deDE)).toBeUndefined();
  }, 60_000);

  it('dub worker publishes its record, refuses a job with locale xx-XX on arrival (invalid_input, no stage ran) and deletes its record when it stops', async () => {
    const names = uniqueNames();
    const root = fs.mkdtempSync(path.join(tmp, 'blobs-'));
    const store = new FsBlobStore(root);
    const daemon = await WorkerDaemon.start({ servers: nats.url, names, blobs: { kind: 'fs', root }, config: loadConfig({ DUB_TMP_DIR: tmp }), handlersModule: FFMPEG_HANDLERS, fetchExpiresMs: 1000, capabilityHeartbeatMs: 300 });
    let stopped = false;
    cleanups.push(() => (stopped ? Promise.resolve() : daemon.stop()));
    const kv = await new Kvm(nc).open(names.capabilitiesBucket);
    const keys: string[] = [];
    for await (const k of await kv.keys()) keys.push(k);
    expect(keys).toHaveLength(1);
    // a handlers module that does not say what it serves: "unknown", and the fleet check accepts
    expect(await record(names.capabilitiesBucket, keys[0]!)).toMatchObject({ v: 1, serves: 'unknown', handlers: FFMPEG_HANDLERS, pid: process.pid });
    expect(await (await FleetCapabilities.open(nc, { bucket: names.capabilitiesBucket })).check({ source: 'en-US', targets: [{ locale: 'de-DE' }] })).toBeUndefined();

    const queue = await NatsJobQueue.connect(nats.url, { names });
    cleanups.push(() => queue.close());
    const feed = await NatsEventFeed.connect(nats.url, { names });
    cleanups.push(() => feed.close());
    const log = new EventLog();
    await feed.subscribe(log.handler);
    const clip = path.join(tmp, 'clip.mp4');
    await makeClip(clip, 1);
    const job = (asset: string, locale: string): Job => ({ v: 1, type: 'prepare-asset', job_id: `job-${asset}`, asset_id: asset, locale, media: { blob: `assets/${asset}/upload/source` }, versions: [{ version_id: `v-${asset}`, dubbing_id: `d-${asset}`, locale: 'es-ES' }] });
    for (const a of ['a-bad', 'a-good']) await store.putFile(`assets/${a}/upload/source`, clip);
    await queue.enqueue(job('a-bad', 'xx-XX'));
    await queue.enqueue(job('a-good', 'en-US'));
    const failed = await log.waitFor((e) => e.asset_id === 'a-bad' && e.type === 'asset_failed', 30_000);
    expect(failed).toMatchObject({ error: { error_code: 'invalid_input', detail: expect.stringMatching(/^locale: "xx-XX" is not supported for its role \(source\)/) } });
    await log.waitFor((e) => e.asset_id === 'a-good' && e.type === 'asset_prepared', 60_000);
    // the good job ran its stages; the bad one none
    const stagesOf = (a: string) => log.of(a).filter((e: WorkerEvent) => e.type === 'stage_done' || e.type === 'progress');
    expect(stagesOf('a-good').length).toBeGreaterThan(0);
    expect(stagesOf('a-bad')).toEqual([]);

    await daemon.stop();
    stopped = true;
    expect(await record(names.capabilitiesBucket, keys[0]!)).toBeUndefined();
  }, 90_000);
});
