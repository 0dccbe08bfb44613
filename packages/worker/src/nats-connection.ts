/**
 * NATS connections of the worker and the API: reconnect forever (a NATS restart is survived),
 * with the connection's status changes logged, and closed with a deadline (`closeNats`): a
 * connection whose server is gone never keeps a stopping process alive.
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

/** How long `closeNats` waits by default for a drain (flush of what was sent, then close). */
export const DEFAULT_CLOSE_TIMEOUT_MS = 2000;

/**
 * How a connection ended: `drained` (every message published before was confirmed by the server,
 * then closed), `closed` (the drain failed or ran out of time, e.g. the server is unreachable:
 * closed without that confirmation, so what was published since the server was last reached may
 * be lost), `abandoned` (even the close did not finish in time; its sockets and timers are
 * dropped by the process exit).
 */
export type CloseOutcome = { how: 'drained' | 'closed' | 'abandoned'; ms: number; error?: string };

function within<T>(p: Promise<T>, ms: number): Promise<{ ok: true; value: T } | { ok: false; error: string }> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.then(
      (value) => ({ ok: true as const, value }),
      (e: unknown) => ({ ok: false as const, error: e instanceof Error ? e.message : String(e) }),
    ),
    new Promise<{ ok: false; error: string }>((r) => (timer = setTimeout(() => r({ ok: false, error: `no answer within ${ms} ms` }), ms))),
  ]).finally(() => clearTimeout(timer));
}

/**
 * Close a connection within `timeoutMs`: drain it (the server confirms what was sent), and when
 * that fails or takes too long (server unreachable: the client would try to reconnect forever,
 * which keeps the process alive) close it, which stops the reconnect loop and its timers.
 */
export async function closeNats(nc: NatsConnection, timeoutMs = DEFAULT_CLOSE_TIMEOUT_MS): Promise<CloseOutcome> {
  const t0 = Date.now();
  const ms = () => Date.now() - t0;
  if (nc.isClosed()) return { how: 'closed', ms: 0 };
  const drained = nc.isDraining() ? await within(nc.closed(), timeoutMs) : await within(nc.drain(), timeoutMs);
  if (drained.ok && nc.isClosed()) return { how: 'drained', ms: ms() };
  const error = drained.ok ? undefined : drained.error;
  const closed = await within(nc.close(), Math.max(250, Math.min(1000, timeoutMs)));
  return { how: closed.ok ? 'closed' : 'abandoned', ms: ms(), ...(error !== undefined ? { error } : {}) };
}
