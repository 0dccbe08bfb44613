/**
 * Callbacks and e-mail over real sockets: signed deliveries verified with the published key,
 * retries with backoff, give-up, a slow receiver not blocking the API, restart durability
 * (catalogue, blobs and a pending callback), owner e-mails through a real SMTP server.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { blobKeys, type CallbackEvent } from '@dub/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBody, dbKinds, postgresAvailable, prepareAsset, startTestApi, type TestApi } from './api-helpers.js';

interface Received {
  body: string;
  signature: string;
  contentType: string;
}

class Receiver {
  readonly got: Received[] = [];
  /** Status codes answered in turn; the last one repeats. */
  answers: number[] = [200];
  delayMs = 0;
  private server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      this.got.push({ body, signature: String(req.headers['x-signature'] ?? ''), contentType: String(req.headers['content-type'] ?? '') });
      const status = this.answers.length > 1 ? this.answers.shift()! : this.answers[0]!;
      setTimeout(() => res.writeHead(status).end('ok'), this.delayMs);
    });
  });
  url = '';
  async listen(port = 0): Promise<string> {
    await new Promise<void>((r) => this.server.listen(port, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
    return this.url;
  }
  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
  events(): CallbackEvent[] {
    return this.got.map((g) => JSON.parse(g.body) as CallbackEvent);
  }
}

async function until(cond: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

const fast = { callbackBackoffMs: 40, outboxPollMs: 40, callbackTimeoutMs: 2000 };

for (const kind of dbKinds()) {
  describe(`callbacks (${kind})`, async () => {
    if (kind === 'postgres' && !(await postgresAvailable())) {
      it.skip('PostgreSQL at 127.0.0.1:5432 is unreachable: PostgreSQL variant skipped', () => undefined);
      return;
    }
    let t: TestApi;
    let rx: Receiver;
    beforeAll(async () => {
      t = await startTestApi(kind, { ...fast, callbackMaxAttempts: 4 });
      rx = new Receiver();
      await rx.listen();
    });
    afterAll(async () => {
      await t?.close();
      await rx?.close();
    });

    it('posts every status change, ES256-signed (DER, hex) and verifiable with the public key', async () => {
      const pem = (await t.api.app.inject({ method: 'GET', url: '/v1/callbacks/public-key' })).body;
      expect(pem).toMatch(/^-----BEGIN PUBLIC KEY-----/);
      const a = (await t.api.app.inject({ method: 'POST', url: '/v1/assets/', headers: t.auth1, payload: createBody({ callback_url: rx.url }) })).json();
      const vid = a.languages[0].versions[0].version_id;
      await prepareAsset(t, a.asset_id);
      await t.api.app.inject({ method: 'POST', url: `/v1/versions/${vid}/generate`, headers: t.auth1, payload: { generate_mode: 'no_lips' } });
      await t.transport.publish({ type: 'version_generate_failed', job_id: 'j', asset_id: a.asset_id, version_id: vid, generation: 1, error: { error_code: 'general_error', detail: 'lips failed' } });
      await until(() => rx.events().filter((e) => e.asset_id === a.asset_id).length >= 3);
      const mine = rx.got.filter((g) => JSON.parse(g.body).asset_id === a.asset_id);
      const events = mine.map((g) => JSON.parse(g.body) as CallbackEvent);
      expect(events.map((e) => [e.event, e.status])).toEqual([
        ['version_ready', 'ReadyToEdit'],
        ['version_generating', 'Generating'],
        ['version_generate_failed', 'Failed'],
      ]);
      expect(events[2]).toMatchObject({ asset_id: a.asset_id, version_id: vid, locale: 'es-ES', error: { error_code: 'general_error', detail: 'lips failed' } });
      expect(Object.keys(events[0]!).sort()).toEqual(['asset_id', 'error', 'event', 'locale', 'sent_at', 'status', 'version_id']);
      for (const g of mine) {
        expect(g.contentType).toBe('application/json');
        expect(g.signature).toMatch(/^[0-9a-f]+$/);
        expect(crypto.verify('sha256', Buffer.from(g.body), pem, Buffer.from(g.signature, 'hex'))).toBe(true);
        // ieee-p1363 (raw r||s) is the other encoding; the header is DER, so this must fail
        expect(crypto.verify('sha256', Buffer.from(g.body + ' '), pem, Buffer.from(g.signature, 'hex'))).toBe(false);
      }
    });

    it('asset_failed has version_id and locale null', async () => {
      const a = (await t.api.app.inject({ method: 'POST', url: '/v1/assets/', headers: t.auth1, payload: createBody({ callback_url: rx.url }) })).json();
      await t.transport.publish({ type: 'asset_failed', job_id: 'j', asset_id: a.asset_id, error: { error_code: 'missing_audio_track', detail: 'no audio stream' } });
      await until(() => rx.events().some((e) => e.asset_id === a.asset_id && e.event === 'asset_failed'));
      const e = rx.events().find((x) => x.asset_id === a.asset_id && x.event === 'asset_failed')!;
      expect(e).toMatchObject({ version_id: null, locale: null, status: 'Failed', error: { error_code: 'missing_audio_track', detail: 'no audio stream' } });
      expect(Date.parse(e.sent_at)).toBeGreaterThan(Date.now() - 60_000);
    });

    it('retries until a 2xx and gives up after the last attempt', async () => {
      const flaky = new Receiver();
      flaky.answers = [500, 503, 200];
      await flaky.listen();
      const dead = new Receiver();
      dead.answers = [500];
      await dead.listen();
      try {
        // asset_failed also fails the asset's NotReady version: two callbacks per asset.
        const a = (await t.api.app.inject({ method: 'POST', url: '/v1/assets/', headers: t.auth1, payload: createBody({ callback_url: flaky.url }) })).json();
        await t.transport.publish({ type: 'asset_failed', job_id: 'j', asset_id: a.asset_id, error: { error_code: 'unsupported_media', detail: 'x' } });
        const rowsOf = async (assetId: string) =>
          (await t.api.db.query<{ attempts: number; delivered_at: unknown; given_up: boolean; last_error: string | null }>('SELECT attempts, delivered_at, given_up, last_error FROM outbox WHERE asset_id = $1 ORDER BY id', [assetId])).rows;
        await until(async () => (await rowsOf(a.asset_id)).every((r) => r.delivered_at !== null));
        const okRows = await rowsOf(a.asset_id);
        expect(okRows).toHaveLength(2);
        expect(okRows.reduce((n, r) => n + Number(r.attempts), 0)).toBe(4);
        expect(flaky.got).toHaveLength(4);
        expect(new Set(flaky.events().map((e) => e.event))).toEqual(new Set(['asset_failed', 'version_failed']));
        const b = (await t.api.app.inject({ method: 'POST', url: '/v1/assets/', headers: t.auth1, payload: createBody({ callback_url: dead.url }) })).json();
        await t.transport.publish({ type: 'asset_failed', job_id: 'j', asset_id: b.asset_id, error: { error_code: 'unsupported_media', detail: 'x' } });
        await until(async () => (await rowsOf(b.asset_id)).every((r) => r.given_up));
        expect(dead.got.length).toBe(8);
        for (const r of await rowsOf(b.asset_id)) {
          expect(Number(r.attempts)).toBe(4);
          expect(r.delivered_at).toBeNull();
          expect(r.last_error).toMatch(/HTTP 500/);
        }
        expect(t.api.dispatcher.backoff(1)).toBe(40);
        expect(t.api.dispatcher.backoff(4)).toBe(320);
        const metrics = (await t.api.app.inject({ method: 'GET', url: '/metrics' })).body;
        expect(metrics).toMatch(/dub_outbox_deliveries_total\{kind="callback",result="error"\} \d+/);
        expect(metrics).toMatch(/dub_outbox_given_up \d+/);
      } finally {
        await flaky.close();
        await dead.close();
      }
    });

    it('a slow receiver does not block the API', async () => {
      const slow = new Receiver();
      slow.delayMs = 1500;
      await slow.listen();
      try {
        const a = (await t.api.app.inject({ method: 'POST', url: '/v1/assets/', headers: t.auth1, payload: createBody({ callback_url: slow.url }) })).json();
        const t0 = Date.now();
        await t.transport.publish({ type: 'asset_failed', job_id: 'j', asset_id: a.asset_id, error: { error_code: 'unsupported_media', detail: 'x' } });
        await until(() => slow.got.length >= 1);
        const r = await t.api.app.inject({ method: 'GET', url: `/v1/assets/${a.asset_id}`, headers: t.auth1 });
        expect(r.statusCode).toBe(200);
        expect(Date.now() - t0).toBeLessThan(1400);
      } finally {
        await slow.close();
      }
    });
  });

  describe(`restart durability (${kind})`, async () => {
    if (kind === 'postgres' && !(await postgresAvailable())) {
      it.skip('PostgreSQL at 127.0.0.1:5432 is unreachable: PostgreSQL variant skipped', () => undefined);
      return;
    }
    it('keeps assets, versions, blobs, keys and a pending callback across a restart', async () => {
      // Reserve a port for the receiver, then keep it closed while the first server runs.
      const probe = new Receiver();
      await probe.listen();
      const url = probe.url;
      const port = Number(new URL(url).port);
      await probe.close();
      const first = await startTestApi(kind, fast);
      const a = (await first.api.app.inject({ method: 'POST', url: '/v1/assets/', headers: first.auth1, payload: createBody({ callback_url: url }) })).json();
      const vid = a.languages[0].versions[0].version_id;
      await prepareAsset(first, a.asset_id);
      const pem1 = first.api.publicKeyPem;
      const before = (await first.api.app.inject({ method: 'GET', url: `/v1/versions/${vid}`, headers: first.auth1 })).json();
      // the receiver is down: the delivery fails and stays pending
      await until(async () => Number((await first.api.db.query<{ attempts: number }>('SELECT attempts FROM outbox WHERE asset_id = $1', [a.asset_id])).rows[0]?.attempts ?? 0) >= 1);
      await first.close({ keepData: true });

      const rx = new Receiver();
      await rx.listen(port);
      const second = await startTestApi(kind, fast, { dataDir: first.dataDir, ...(first.schema ? { schema: first.schema } : {}) });
      try {
        expect(second.api.publicKeyPem).toBe(pem1);
        const asset = (await second.api.app.inject({ method: 'GET', url: `/v1/assets/${a.asset_id}`, headers: second.auth1 })).json();
        expect(asset).toMatchObject({ asset_id: a.asset_id, status: 'Ready', duration: 120 });
        const v = (await second.api.app.inject({ method: 'GET', url: `/v1/versions/${vid}`, headers: second.auth1 })).json();
        expect(v).toEqual(before);
        expect(await second.api.store.has(blobKeys.script(vid))).toBe(true);
        await until(() => rx.events().some((e) => e.asset_id === a.asset_id && e.event === 'version_ready'));
        const g = rx.got.find((x) => JSON.parse(x.body).asset_id === a.asset_id)!;
        expect(crypto.verify('sha256', Buffer.from(g.body), pem1, Buffer.from(g.signature, 'hex'))).toBe(true);
      } finally {
        await rx.close();
        await second.close();
      }
    });
  });
}

describe('e-mail notifications (smtp-server)', () => {
  let smtp: SMTPServer;
  const mails: { to: string; data: string }[] = [];
  let port = 0;
  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, session, cb) {
        let data = '';
        stream.on('data', (c: Buffer) => (data += c.toString()));
        stream.on('end', () => {
          mails.push({ to: session.envelope.rcptTo.map((r) => r.address).join(','), data });
          cb();
        });
      },
    });
    await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', () => r()));
    port = (smtp.server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => smtp.close(() => r())));

  it('mails the owner when added languages are ready and when a generation completes or fails', async () => {
    const t = await startTestApi('pglite', { ...fast, smtpUrl: `smtp://127.0.0.1:${port}`, smtpFrom: 'dub@example.org', orgEmails: { org1: 'ops@example.com' } });
    try {
      const a = (await t.api.app.inject({ method: 'POST', url: '/v1/assets/', headers: t.auth1, payload: createBody() })).json();
      const vid = a.languages[0].versions[0].version_id;
      await prepareAsset(t, a.asset_id);
      // the initial language being ready sends no mail
      const added = (await t.api.app.inject({ method: 'POST', url: `/v1/assets/${a.asset_id}/languages`, headers: t.auth1, payload: { languages: [{ locale: 'de-DE' }] } })).json();
      const deVid = added.languages[1].versions[0].version_id;
      const { prepareVersion, finishGeneration } = await import('./api-helpers.js');
      await prepareVersion(t, a.asset_id, deVid);
      await until(() => mails.length >= 1);
      expect(mails[0]!.to).toBe('ops@example.com');
      expect(mails[0]!.data).toMatch(/Subject: \[dub\] Interview: de-DE is ready for review/);
      await t.api.app.inject({ method: 'POST', url: `/v1/versions/${vid}/generate`, headers: t.auth1, payload: { generate_mode: 'no_lips' } });
      await finishGeneration(t, a.asset_id, vid, 1);
      await until(() => mails.length >= 2);
      expect(mails[1]!.data).toMatch(/Subject: \[dub\] Interview: es-ES has been generated/);
      expect(mails[1]!.data).toContain(vid);
      await t.api.app.inject({ method: 'PATCH', url: `/v1/versions/${vid}/revise`, headers: t.auth1, payload: {} });
      await t.api.app.inject({ method: 'POST', url: `/v1/versions/${vid}/generate`, headers: t.auth1, payload: { generate_mode: 'no_lips' } });
      await t.transport.publish({ type: 'version_generate_failed', job_id: 'j', asset_id: a.asset_id, version_id: vid, generation: 2, error: { error_code: 'general_error', detail: 'synthesis failed' } });
      await until(() => mails.length >= 3);
      expect(mails[2]!.data).toMatch(/failed during generation/);
      expect(mails[2]!.data).toContain('general_error: synthesis failed');
      expect(mails).toHaveLength(3);
    } finally {
      await t.close();
    }
  });
});
