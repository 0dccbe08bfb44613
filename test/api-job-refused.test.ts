/**
 * A job the queue refuses for good (an error with retryable: false, e.g. NATS's payload_too_large
 * for a job with nothing left to move to the blob store) is not retried forever: the outbox
 * dispatcher gives its row up and the job's asset fails with the refusal's message, as a worker's
 * failure would. A refusal that may pass later (retryable) is retried and the job goes through.
 */
import { afterEach, expect, it } from 'vitest';
import { DubError, type Job } from '@dub/core';
import { createBody, startTestApi, type TestApi } from './api-helpers.js';

let t: TestApi | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const status = async (id: string) => (await t!.api.app.inject({ method: 'GET', url: `/v1/assets/${id}`, headers: t!.auth1 })).json() as { status: string; error?: { error_code: string; detail: string } | null };

it('a job refused for good fails its asset with the refusal, once', async () => {
  t = await startTestApi('pglite', { outboxPollMs: 50 });
  let tries = 0;
  t.transport.enqueue = async (job: Job) => {
    tries++;
    throw new DubError('payload_too_large', `job ${job.job_id} is 2097152 bytes, over 1048576, and has no inline subtitle text to move to the blob store`, { retryable: false, status: 413 });
  };
  const created = await t.api.app.inject({ method: 'POST', url: '/v1/assets/', headers: t.auth1, payload: createBody() });
  expect(created.statusCode, created.body).toBe(201);
  const id = (created.json() as { asset_id: string }).asset_id;
  await expect.poll(async () => (await status(id)).status, { timeout: 20_000, interval: 100 }).toBe('Failed');
  const a = await status(id);
  expect(a.error).toMatchObject({ error_code: 'processing_failed', detail: expect.stringMatching(/is 2097152 bytes, over 1048576/) });
  // the request's own try and the dispatcher's one: given up, not retried
  await new Promise((r) => setTimeout(r, 1500));
  expect(tries).toBe(2);
});

it('a refusal that may pass later is retried until the queue takes the job', async () => {
  t = await startTestApi('pglite', { outboxPollMs: 50 });
  const real = t.transport.enqueue.bind(t.transport);
  let tries = 0;
  t.transport.enqueue = async (job: Job) => {
    if (++tries < 3) throw new DubError('storage_unavailable', 'the bus is down', { retryable: true, status: 503 });
    return real(job);
  };
  const created = await t.api.app.inject({ method: 'POST', url: '/v1/assets/', headers: t.auth1, payload: createBody() });
  expect(created.statusCode, created.body).toBe(201);
  const id = (created.json() as { asset_id: string }).asset_id;
  await expect.poll(() => t!.transport.jobsOf('prepare-asset').length, { timeout: 20_000, interval: 100 }).toBe(1);
  expect((await status(id)).status).not.toBe('Failed');
});
