/**
 * Jobs that fit the bus (issue 24 item 6). NATS refuses a message over the server's max_payload
 * (1 MiB by default), and inline `source_srt` / `versions[].srt` count against it. A publisher
 * whose job would not fit moves that text into the blob store and sends its key; the worker reads
 * it back before the handler runs. Without a store the publisher gets a clear error, and its
 * connection stays usable. Each case runs against its own private nats-server.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { FsBlobStore, isDubError, type PrepareAssetJob } from '@dub/core';
import { DEFAULT_MAX_PAYLOAD_BYTES, jobTextKey, NatsJobQueue } from '@dub/worker';
import { startNatsServer, type TestNatsServer } from '../packages/worker/src/testing/nats-server.js';
import { freePort, ROOT, spawnDub, waitFor, waitHealthy, type DubProcess } from './e2e-helpers.js';

const CONTROL_HANDLERS = path.join(ROOT, 'packages/worker/dist/testing/control-handlers.js');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-job-size-'));
const servers: TestNatsServer[] = [];
const procs: DubProcess[] = [];

afterAll(async () => {
  for (const p of procs) await p.stop();
  for (const s of servers) await s.dispose();
  fs.rmSync(tmp, { recursive: true, force: true });
});

async function nats(maxPayload?: number): Promise<TestNatsServer> {
  const s = await startNatsServer(maxPayload !== undefined ? { maxPayload } : {});
  servers.push(s);
  return s;
}

/** A valid SRT of at least `minBytes` UTF-8 bytes, with non-ASCII text (accents, CJK). */
function srtOf(minBytes: number, words: string): string {
  const cues: string[] = [];
  let size = 0;
  for (let i = 1; size < minBytes; i++) {
    const t = (s: number) => `${String(Math.floor(s / 3600)).padStart(2, '0')}:${String(Math.floor(s / 60) % 60).padStart(2, '0')}:${String(s % 60).padStart(2, '0')},000`;
    const cue = `${i}\n${t(i * 2)} --> ${t(i * 2 + 1)}\n${words} ${i}\n`;
    cues.push(cue);
    size += Buffer.byteLength(cue, 'utf8') + 1;
  }
  return cues.join('\n');
}

const digest = (text: string) => ({ bytes: Buffer.byteLength(text, 'utf8'), sha256: createHash('sha256').update(text, 'utf8').digest('hex') });

function bigJob(assetId: string, jobId: string, sourceSrt: string, versionSrt?: string): PrepareAssetJob {
  return {
    v: 1,
    type: 'prepare-asset',
    job_id: jobId,
    asset_id: assetId,
    locale: 'en-US',
    media: { blob: `assets/${assetId}/upload/source` },
    source_srt: sourceSrt,
    versions: [{ version_id: `ver-${assetId}`, dubbing_id: `dub-${assetId}`, locale: 'es-ES', ...(versionSrt !== undefined ? { srt: versionSrt } : {}) }],
  };
}

async function storedJobs(url: string): Promise<{ bytes: number; job: Record<string, unknown> }[]> {
  const nc = await connect({ servers: url });
  try {
    const jsm = await jetstreamManager(nc);
    const info = await jsm.streams.info('DUB_JOBS');
    const out = [];
    for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
      const m = await jsm.streams.getMessage('DUB_JOBS', { seq }).catch(() => undefined);
      if (m) out.push({ bytes: m.data.length, job: JSON.parse(m.string()) as Record<string, unknown> });
    }
    return out;
  } finally {
    await nc.close();
  }
}

describe('jobs that fit the bus', () => {
  it("a 1 MiB + 1 byte job: refused with a clear error by a queue without a store (the connection stays up), sent with a blob key by one with a store", async () => {
    const server = await nats();
    const store = new FsBlobStore(path.join(tmp, 'blobs-a'));
    const plain = await NatsJobQueue.connect(server.url);
    const withStore = await NatsJobQueue.connect(server.url, { store });
    try {
      expect(plain.maxPayloadBytes).toBe(DEFAULT_MAX_PAYLOAD_BYTES); // the server's advertised max_payload
      // Pad the source SRT so the job's JSON is exactly 1 MiB + 1 byte.
      const base = bigJob('big-a', 'job-big-a', '');
      const job = { ...base, source_srt: 'x'.repeat(DEFAULT_MAX_PAYLOAD_BYTES + 1 - Buffer.byteLength(JSON.stringify(base))) };
      expect(Buffer.byteLength(JSON.stringify(job))).toBe(DEFAULT_MAX_PAYLOAD_BYTES + 1);

      const err = await plain.enqueue(job).then(() => undefined, (e: unknown) => e);
      expect(isDubError(err) && err.code).toBe('payload_too_large');
      expect(isDubError(err) && err.retryable).toBe(false);
      expect((err as Error).message).toMatch(/job job-big-a is 1048577 bytes, over the bus's message limit of 1048576 bytes .* no blob store/);
      // The connection was not reset: the same queue publishes the next job.
      await plain.enqueue(bigJob('small-a', 'job-small-a', '1\n00:00:01,000 --> 00:00:02,000\nhello\n'));

      await withStore.enqueue(job);
      const stored = await storedJobs(server.url);
      expect(stored.map((s) => s.job.job_id)).toEqual(['job-small-a', 'job-big-a']);
      const sent = stored[1]!;
      expect(sent.bytes).toBeLessThan(4096);
      expect(sent.job.source_srt).toBeUndefined();
      expect(sent.job.source_srt_key).toBe(jobTextKey('big-a', job.source_srt));
      expect((await store.getBuffer(String(sent.job.source_srt_key))).toString('utf8')).toBe(job.source_srt);
    } finally {
      await plain.close();
      await withStore.close();
    }
  }, 60_000);

  it("follows the server's advertised max_payload: a dub worker process gets the text back inline, also in the follow-up job it publishes", async () => {
    const server = await nats(64 * 1024);
    const blobs = path.join(tmp, 'blobs-b');
    const store = new FsBlobStore(blobs);
    const queue = await NatsJobQueue.connect(server.url, { store });
    const worker = spawnDub(['worker', '--nats', server.url, '--handlers', CONTROL_HANDLERS, '--blobs', `fs:${blobs}`, '--no-warmup'], { DUB_LOG_LEVEL: 'info', DUB_TMP_DIR: tmp });
    procs.push(worker);
    try {
      expect(queue.maxPayloadBytes).toBe(64 * 1024);
      const source = srtOf(40 * 1024, 'Línea de diálogo — ünïcödé 字幕');
      const target = srtOf(50 * 1024, 'Línea traducida ñ 翻訳');
      // Together they pass the limit: the job goes with keys.
      const job = bigJob('follow-b', 'job-follow-b', source, target);
      expect(Buffer.byteLength(JSON.stringify(job))).toBeGreaterThan(64 * 1024);
      await queue.enqueue(job);
      const received = (jobId: string) =>
        waitFor(`received/${jobId}.json (worker log: ${worker.log()})`, async () => {
          const b = await store.getBuffer(`received/${jobId}.json`).catch(() => undefined);
          return b ? (JSON.parse(b.toString('utf8')) as { source_srt: unknown; versions: { srt: unknown }[]; keys_left: boolean }) : undefined;
        }, 60_000);
      const got = await received('job-follow-b');
      expect(got).toEqual({ source_srt: digest(source), versions: [{ version_id: 'ver-follow-b', srt: digest(target) }], keys_left: false });
      // The follow-up prepare-version job (the handler enqueues it with its version's SRT inline,
      // 50 KiB: over the limit less its margin) goes out of the worker's own queue with a key too.
      const follow = await received('job-follow-b-v');
      expect(follow).toEqual({ source_srt: null, versions: [{ version_id: 'ver-follow-b', srt: digest(target) }], keys_left: false });
      expect(worker.log()).toMatch(/"job_id":"job-follow-b-v"[^\n]*sent with blob keys/);
    } finally {
      await queue.close();
      expect(await worker.stop()).toBe(0);
    }
  }, 120_000);

  it('through the API: dub serve --nats moves the SRTs of a job over the limit to blobs, and dub worker hands them to the handler intact', async () => {
    const server = await nats(64 * 1024);
    const blobs = path.join(tmp, 'blobs-c');
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const api = spawnDub(['serve', '--port', String(port), '--host', '127.0.0.1', '--data-dir', path.join(tmp, 'api-c'), '--nats', server.url, '--blobs', `fs:${blobs}`], {
      DUB_API_KEYS: 'k1:org1',
      DUB_ALLOW_PRIVATE_URLS: '1',
      DUB_LOG_LEVEL: 'info',
    });
    procs.push(api);
    const worker = spawnDub(['worker', '--nats', server.url, '--handlers', CONTROL_HANDLERS, '--blobs', `fs:${blobs}`, '--no-warmup'], { DUB_LOG_LEVEL: 'info', DUB_TMP_DIR: tmp });
    procs.push(worker);
    await waitHealthy(base, api, 150_000); // a loaded 2-core machine took 44-75 s to start it
    const source = srtOf(50 * 1024, 'Source line, café 字幕');
    const target = srtOf(50 * 1024, 'Línea en español, ñandú');
    const res = await fetch(`${base}/v1/assets/`, {
      method: 'POST',
      headers: { authorization: 'Bearer k1', 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'big subtitles', locale: 'en-US', media_url: 'http://127.0.0.1:9/v.mp4', source_srt: source, languages: [{ locale: 'es-ES', srt: target }] }),
    });
    expect(res.status, api.log()).toBe(201);
    const asset = (await res.json()) as { asset_id: string };
    const store = new FsBlobStore(blobs);
    const got = await waitFor(`the prepare-asset job's handler (api log: ${api.log()}; worker log: ${worker.log()})`, async () => {
      const b = await store.getBuffer(`received/job_prep_${asset.asset_id}.json`).catch(() => undefined);
      return b ? (JSON.parse(b.toString('utf8')) as { source_srt: unknown; versions: { srt: unknown }[]; keys_left: boolean }) : undefined;
    }, 90_000);
    expect(got.source_srt).toEqual(digest(source));
    expect(got.versions.map((v) => v.srt)).toEqual([digest(target)]);
    expect(got.keys_left).toBe(false);
    expect(await store.has(jobTextKey(asset.asset_id, source))).toBe(true);
    expect(api.log()).toContain('sent with blob keys');
  }, 300_000);
});
