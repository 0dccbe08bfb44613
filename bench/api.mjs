#!/usr/bin/env node
// API throughput: GET /v1/assets/{id} of @dub/api (auth, rate-limit hook, database read, signed
// links, response schema) against a bare fastify route that returns the same JSON, in the same
// run, over loopback with a keep-alive node:http Agent; plus create-asset latency (POST
// /v1/assets/, validation + transaction + enqueue). Bounded request counts. Prints a markdown table.
// Build first: `npm run build`. Options: --requests N (default 4000), --concurrency C (default 16).
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import Fastify from 'fastify';
import { createApi, MemoryTransport } from '@dub/api';

const { values } = parseArgs({ options: { requests: { type: 'string', default: '4000' }, concurrency: { type: 'string', default: '16' }, creates: { type: 'string', default: '300' } } });
const REQUESTS = Number(values.requests);
const CONC = Number(values.concurrency);
const CREATES = Number(values.creates);

const agent = new http.Agent({ keepAlive: true, maxSockets: CONC });

function request(url, { method = 'GET', headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers: { ...headers, ...(body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {}) }, agent }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** N requests with C in flight; returns requests per second and latency percentiles (ms). */
async function load(n, c, make) {
  let next = 0;
  const lat = [];
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: c }, async () => {
      while (next < n) {
        next++;
        const s = process.hrtime.bigint();
        const r = await make();
        if (r.status >= 300) throw new Error(`HTTP ${r.status}: ${r.body}`);
        lat.push(Number(process.hrtime.bigint() - s) / 1e6);
      }
    }),
  );
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  lat.sort((a, b) => a - b);
  const pct = (p) => lat[Math.min(lat.length - 1, Math.floor((p / 100) * lat.length))];
  return { rps: n / secs, p50: pct(50), p99: pct(99) };
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-bench-api-'));
const transport = new MemoryTransport();
const api = await createApi({ dataDir, keys: [{ key: 'bench-key', org: 'bench' }], allowPrivateUrls: true, transport: { queue: transport, events: transport }, dispatch: false });
const base = await api.listen(0);
const auth = { authorization: 'Bearer bench-key' };
const createBody = JSON.stringify({ name: 'Bench', locale: 'en-US', languages: [{ locale: 'es-ES' }, { locale: 'fr-FR' }], media_url: 'http://127.0.0.1:9/v.mp4' });
const created = JSON.parse((await request(`${base}/v1/assets/`, { method: 'POST', headers: auth, body: createBody })).body);
const assetUrl = `${base}/v1/assets/${created.asset_id}`;
const sample = (await request(assetUrl, { headers: auth })).body;

const bare = Fastify({ logger: false });
bare.get('/v1/assets/:id', async (_req, reply) => reply.type('application/json').send(sample));
await bare.listen({ port: 0, host: '127.0.0.1' });
const bareUrl = `http://127.0.0.1:${bare.server.address().port}/v1/assets/${created.asset_id}`;

// warm up both
await load(300, CONC, () => request(assetUrl, { headers: auth }));
await load(300, CONC, () => request(bareUrl));
const ours = await load(REQUESTS, CONC, () => request(assetUrl, { headers: auth }));
const peer = await load(REQUESTS, CONC, () => request(bareUrl));
const createSeq = await load(CREATES, 1, () => request(`${base}/v1/assets/`, { method: 'POST', headers: auth, body: createBody }));
const createConc = await load(CREATES, 8, () => request(`${base}/v1/assets/`, { method: 'POST', headers: auth, body: createBody }));
const bareCreate = await load(CREATES, 1, () => request(bareUrl));

const f = (x, d = 0) => x.toFixed(d);
console.log(`GET /v1/assets/{id} (${sample.length} B JSON), ${REQUESTS} requests, ${CONC} in flight, keep-alive loopback, ${api.db.kind}; ${os.cpus().length} CPUs\n`);
console.log('| case | req/s | p50 ms | p99 ms | ratio vs bare fastify |');
console.log('|---|---:|---:|---:|---:|');
console.log(`| bare fastify route, same JSON | ${f(peer.rps)} | ${f(peer.p50, 2)} | ${f(peer.p99, 2)} | 1.00 |`);
console.log(`| @dub/api GET asset | ${f(ours.rps)} | ${f(ours.p50, 2)} | ${f(ours.p99, 2)} | ${f(ours.rps / peer.rps, 2)} (target >= 0.50) |`);
console.log(`| @dub/api POST asset, 1 in flight | ${f(createSeq.rps)} | ${f(createSeq.p50, 2)} | ${f(createSeq.p99, 2)} | ${f(createSeq.p50 / bareCreate.p50, 1)}x bare p50 latency |`);
console.log(`| @dub/api POST asset, 8 in flight | ${f(createConc.rps)} | ${f(createConc.p50, 2)} | ${f(createConc.p99, 2)} | |`);

agent.destroy();
await bare.close();
await api.close();
fs.rmSync(dataDir, { recursive: true, force: true });
