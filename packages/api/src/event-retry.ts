/**
 * Worker events whose asset or version is not visible in the database (yet) are not dropped at
 * once: the handler throws, the event feed delivers the event again after its backoff (100 ms
 * doubling to 5 s, later events of the feed waiting behind it), and only when the rows have not
 * appeared within `windowMs` of the first delivery is the event logged as an error and dropped.
 * Jobs leave through the outbox after their commit, so this is a safety net: for a database that
 * lags (a replica) or events of jobs another front enqueued.
 */
import type { Logger, WorkerEvent } from '@dub/core';
import { NotVisibleError } from './errors.js';

export { NotVisibleError };

/** Events remembered at once (oldest forgotten first); one entry per event being retried. */
const MAX_TRACKED = 10_000;

export interface EventRetryOptions {
  /** How long after its first delivery an event waits for its rows before it is dropped. */
  windowMs: number;
  logger: Logger;
  now?: () => number;
}

function keyOf(ev: WorkerEvent): string {
  return `${ev.job_id}|${ev.type}|${ev.at}|${'version_id' in ev ? ev.version_id : ''}`;
}

export class EventRetry {
  private readonly firstSeen = new Map<string, number>();
  private readonly now: () => number;

  constructor(private readonly o: EventRetryOptions) {
    this.now = o.now ?? Date.now;
  }

  /** Events now waiting for their rows. */
  get waiting(): number {
    return this.firstSeen.size;
  }

  /**
   * Apply `ev`. A NotVisibleError is rethrown (the feed delivers the event again) until
   * `windowMs` passed since the event's first delivery; then the event is logged and dropped.
   */
  async apply(ev: WorkerEvent, fn: (ev: WorkerEvent) => Promise<void>): Promise<void> {
    const key = keyOf(ev);
    try {
      await fn(ev);
    } catch (e) {
      if (!(e instanceof NotVisibleError)) throw e;
      const now = this.now();
      let first = this.firstSeen.get(key);
      if (first === undefined) {
        first = now;
        if (this.firstSeen.size >= MAX_TRACKED) this.firstSeen.delete(this.firstSeen.keys().next().value!);
        this.firstSeen.set(key, first);
      }
      const waited = now - first;
      if (waited < this.o.windowMs) {
        this.o.logger.warn({ event: ev.type, job_id: ev.job_id, asset_id: ev.asset_id, waited_ms: waited }, `${e.message} yet; the event is delivered again`);
        throw e;
      }
      this.firstSeen.delete(key);
      this.o.logger.error({ event: ev.type, job_id: ev.job_id, asset_id: ev.asset_id, waited_ms: waited }, `${e.message} after ${Math.round(waited / 1000)} s; the event is dropped`);
      return;
    }
    this.firstSeen.delete(key);
  }
}
