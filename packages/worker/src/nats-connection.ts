/**
 * NATS connections of the worker and the API: reconnect forever (a NATS restart is survived),
 * with the connection's status changes logged.
 */
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { Logger } from '@dub/core';

export function parseServers(raw: string | string[]): string[] {
  return (Array.isArray(raw) ? raw : raw.split(',')).map((s) => s.trim()).filter(Boolean);
}

export async function connectNats(servers: string | string[], opts: { name?: string; logger?: Logger } = {}): Promise<NatsConnection> {
  const nc = await connect({ servers: parseServers(servers), name: opts.name ?? 'dub', maxReconnectAttempts: -1, reconnectTimeWait: 250, waitOnFirstConnect: false });
  const log = opts.logger;
  if (log) {
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type === 'disconnect') log.warn({ server: s.server }, 'NATS disconnected');
        else if (s.type === 'reconnect') log.info({ server: s.server }, 'NATS reconnected');
      }
    })().catch(() => undefined);
  }
  return nc;
}
