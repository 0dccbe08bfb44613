/**
 * The distributed shape of the design card, end to end with the shipped commands: `dub serve
 * --nats` only enqueues into JetStream, a separate `dub worker` process pulls the jobs and runs
 * the real @dub/pipeline handlers (threads, warmup, NATS object store for blobs), and the API
 * follows the worker's events. auto_generate=no_lips takes the version to Completed without a
 * further call. A private nats-server keeps this run apart from anything else on the machine.
 *
 * This checks the transport (queue, worker, object store, events), not the engines: the worker
 * runs without separation and speaks with espeak-ng (DUB_SEPARATION_ENGINE=none,
 * DUB_TTS_ENGINE=espeak-ng, as an operator would choose them). e2e-serve.test.ts dubs the same
 * sample on the defaults.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNatsServer, type TestNatsServer } from '../packages/worker/src/testing/nats-server.js';
import { ffprobeJson, freePort, makeSample, spawnDub, waitFor, waitHealthy, type DubProcess } from './e2e-helpers.js';

const KEY = 'nats-e2e-key';
const auth = { authorization: `Bearer ${KEY}` };

describe('dub serve --nats + dub worker', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-e2e-nats-'));
  let nats: TestNatsServer;
  let api: DubProcess;
  let worker: DubProcess;
  let base = '';
  let metricsPort = 0;

  beforeAll(async () => {
    makeSample(path.join(dir, 'sample.mp4'));
    nats = await startNatsServer();
    const port = await freePort();
    metricsPort = await freePort();
    base = `http://127.0.0.1:${port}`;
    api = spawnDub(['serve', '--port', String(port), '--host', '127.0.0.1', '--data-dir', path.join(dir, 'api'), '--nats', nats.url], { DUB_API_KEYS: `${KEY}:org1` });
    worker = spawnDub(['worker', '--nats', nats.url, '--data-dir', path.join(dir, 'worker'), '--concurrency', '1', '--metrics-port', String(metricsPort)], { DUB_SEPARATION_ENGINE: 'none', DUB_TTS_ENGINE: 'espeak-ng' });
    await waitHealthy(base, api, 150_000); // a loaded 2-core machine took 44-75 s to start dub serve
  }, 180_000);

  afterAll(async () => {
    await api?.stop();
    await worker?.stop();
    await nats?.dispose();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a worker elsewhere prepares and generates an auto_generate asset; the API serves the result', async () => {
    const form = new FormData();
    form.set('request', JSON.stringify({ name: 'distributed', locale: 'en-US', languages: [{ locale: 'es-ES' }], auto_generate: 'no_lips' }));
    form.set('video', new Blob([fs.readFileSync(path.join(dir, 'sample.mp4'))], { type: 'video/mp4' }), 'sample.mp4');
    const created = await fetch(`${base}/v1/assets/upload`, { method: 'POST', headers: auth, body: form });
    expect(created.status, api.log()).toBe(201);
    const asset = (await created.json()) as { asset_id: string; languages: { versions: { version_id: string }[] }[] };
    const versionId = asset.languages[0]!.versions[0]!.version_id;

    const seen = new Set<string>();
    const done = await waitFor(`Completed (worker log: ${worker.log()})`, async () => {
      const v = (await (await fetch(`${base}/v1/versions/${versionId}`, { headers: auth })).json()) as Record<string, unknown>;
      seen.add(String(v.status));
      if (v.status === 'Failed') throw new Error(`version failed: ${JSON.stringify(v.error)}; worker: ${worker.log()}`);
      return v.status === 'Completed' ? v : undefined;
    }, 420_000);
    expect(seen.has('Generating') || seen.has('NotReady')).toBe(true);

    const file = path.join(dir, 'result.mp4');
    const res = await fetch(String(done.result_url));
    expect(res.status).toBe(200);
    fs.writeFileSync(file, Buffer.from(await res.arrayBuffer()));
    expect(ffprobeJson(file).streams.map((s) => s.codec_type).sort()).toEqual(['audio', 'video']);

    const srt = await fetch(`${base}/v1/versions/${versionId}/srt`, { headers: auth });
    expect(srt.status).toBe(200);
    expect((await srt.text()).length).toBeGreaterThan(10);

    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    for (const type of ['prepare-asset', 'prepare-version', 'generate-version']) expect(metrics).toContain(`dub_worker_jobs_total{type="${type}",outcome="done"} 1`);
    expect(await worker.stop()).toBe(0);
  }, 600_000);
});
