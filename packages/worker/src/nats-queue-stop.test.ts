/**
 * A queue whose NATS is gone, stopped while publishes of one job are in flight (the request's own
 * publish and the outbox's retry of the same job): both are given up, and the job is listed
 * once among those not enqueued.
 */
import { afterAll, expect, it } from 'vitest';
import { NatsJobQueue } from './nats-queue.js';
import { startNatsServer, type TestNatsServer } from './testing/nats-server.js';

let server: TestNatsServer | undefined;
afterAll(async () => {
  await server?.dispose();
});

it('publishes given up at stop: each job id is listed once among those not enqueued', async () => {
  server = await startNatsServer();
  const q = await NatsJobQueue.connect(server.url, { publishTimeoutMs: 30_000 });
  await q.ensureStreams();
  await server.stop();
  const job = (id: string) => ({ v: 1 as const, type: 'prepare-asset' as const, job_id: id, asset_id: `ast-${id}`, locale: 'en-US', media: { blob: 'x' }, versions: [] });
  const sends = [q.enqueue(job('job-a')), q.enqueue(job('job-a')), q.enqueue(job('job-b'))].map((p) => p.then(() => 'sent', (e: Error) => e.message));
  await new Promise((r) => setTimeout(r, 300));
  q.stopPublishing();
  const outcomes = await Promise.all(sends);
  expect(outcomes.every((o) => o !== 'sent'), outcomes.join('; ')).toBe(true);
  expect([...q.notEnqueued].sort()).toEqual(['job-a', 'job-b']);
  await q.close();
}, 30_000);
