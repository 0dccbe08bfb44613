/**
 * An event feed whose NATS is gone, its subscriber stopped: the stop returns at once. A pull in
 * progress when the connection dropped without the server's word (killed, or a cut link) never
 * ends by itself (the client cancels its heartbeat check while disconnected, and the server's
 * expiry never arrives). `dub serve --nats` waited on it past its drain timeout to its backstop
 * and exited 1 (a CI run of test/nats-down-stop.test.ts, 2026-11-27); with the server killed it
 * hung here every time before the fix.
 */
import { afterAll, expect, it } from 'vitest';
import { NatsEventFeed } from './nats-event-feed.js';
import { startNatsServer, type TestNatsServer } from './testing/nats-server.js';

const servers: TestNatsServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.dispose();
});

async function until(what: string, f: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!f()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const cases = (['kill', 'stop'] as const).flatMap((how) => [0, 300, 1500].map((afterMs) => ({ how, afterMs })));
for (const { how, afterMs } of cases) {
  it(`NATS ${how === 'kill' ? 'killed' : 'stopped'}: a subscriber stopped ${afterMs} ms after the disconnect stops within a second, and close() returns`, async () => {
    const server = await startNatsServer();
    servers.push(server);
    const feed = await NatsEventFeed.connect(server.url);
    const sub = await feed.subscribe(async () => undefined);
    await new Promise((r) => setTimeout(r, 1200)); // a pull is in progress (each expires after 1 s)
    await (how === 'kill' ? server.kill() : server.stop());
    await until('the disconnect', () => !feed.connected, 10_000);
    await new Promise((r) => setTimeout(r, afterMs));
    const t0 = Date.now();
    await sub.stop();
    expect(Date.now() - t0).toBeLessThan(1000);
    const t1 = Date.now();
    await feed.close(2000);
    expect(Date.now() - t1).toBeLessThan(6000);
  }, 60_000);
}
