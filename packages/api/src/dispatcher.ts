/**
 * Background delivery of the outbox: signed callbacks (POST, ES256 X-Signature, through safeFetch
 * so private addresses stay refused) and e-mails. Retries with exponential backoff until a 2xx or
 * `maxAttempts`; rows live in the database, so a restart resumes pending deliveries. Requests run
 * off the request path: a slow receiver never blocks the API.
 *
 * Job rows (see job-outbox.ts) are the jobs the committing request could not enqueue (queue
 * down, disk full, process stopped first): they are enqueued with the same backoff, capped at
 * one minute, and never given up (only a row whose body is no valid job is); once the queue
 * holds a job its row is removed.
 */
import type crypto from 'node:crypto';
import { parseJob, readBody, safeFetch, type Job, type JobQueue, type Logger } from '@dub/core';
import * as cat from './catalog.js';
import type { Db } from './db/db.js';
import type { Mailer } from './mailer.js';
import { signCallbackBody } from './signing.js';

export interface DispatcherOptions {
  db: Db;
  key: crypto.KeyObject;
  logger: Logger;
  mailer?: Mailer;
  /** Where job rows go. */
  queue?: JobQueue;
  allowPrivateUrls: boolean;
  maxAttempts: number;
  /** First retry delay; attempt n waits backoffMs * 2^(n-1) (capped at 30 minutes). */
  backoffMs: number;
  timeoutMs: number;
  pollMs: number;
  /** Deliveries in flight at once. */
  concurrency?: number;
  onResult?: (kind: string, ok: boolean) => void;
  /**
   * The queue refused a job for good (an error with `retryable: false`, e.g. payload_too_large:
   * a job over the bus's message limit with nothing to move to the blob store). Its row is given
   * up; this fails the job's asset or version (its failure event), so it does not wait forever.
   */
  onJobRefused?: (job: Job, err: { code: string; message: string }) => Promise<void>;
}

/** Job rows are tried at least once a minute. */
const JOB_BACKOFF_MAX_MS = 60_000;

export class OutboxDispatcher {
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private again = false;
  private stopped = false;
  private current: Promise<void> = Promise.resolve();

  constructor(private readonly o: DispatcherOptions) {}

  start(): void {
    this.stopped = false;
    this.kick();
  }

  /** Run a pass now (new rows were written). */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.running = true;
    this.current = this.pass()
      .catch((e) => this.o.logger.error({ err: e }, 'outbox pass failed'))
      .finally(() => {
        this.running = false;
        if (this.stopped) return;
        if (this.again) {
          this.again = false;
          this.kick();
        } else this.timer = setTimeout(() => this.kick(), this.o.pollMs);
      });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.current;
  }

  backoff(attempts: number, kind: cat.OutboxItem['kind'] = 'callback'): number {
    return Math.min(this.o.backoffMs * 2 ** Math.max(0, attempts - 1), kind === 'job' ? JOB_BACKOFF_MAX_MS : 30 * 60_000);
  }

  private async pass(): Promise<void> {
    const conc = this.o.concurrency ?? 8;
    for (;;) {
      const now = Date.now();
      const due = await cat.claimDue(this.o.db, now, conc, this.o.timeoutMs * 3 + 5_000);
      if (due.length === 0 || this.stopped) return;
      await Promise.all(due.map((row) => this.deliver(row)));
    }
  }

  private async deliver(row: cat.OutboxRow): Promise<void> {
    let error: string | undefined;
    let invalid = false;
    let refused: { job: Job; code: string; message: string } | undefined;
    try {
      if (row.kind === 'job') {
        let job: Job;
        try {
          job = parseJob(JSON.parse(row.body));
        } catch (e) {
          invalid = true;
          throw e;
        }
        if (!this.o.queue) throw new Error('no job queue');
        try {
          await this.o.queue.enqueue(job);
        } catch (e) {
          const r = e as { retryable?: unknown; code?: unknown; message?: unknown };
          if (r.retryable === false) refused = { job, code: typeof r.code === 'string' ? r.code : 'processing_failed', message: String(r.message ?? e) };
          throw e;
        }
      } else if (row.kind === 'callback') await this.post(row);
      else if (row.kind === 'email') {
        if (!this.o.mailer) throw new Error('no SMTP server configured (DUB_SMTP_URL)');
        await this.o.mailer.send(row.target, row.subject ?? '', row.body);
      } else throw new Error(`unknown outbox kind ${row.kind}`);
    } catch (e) {
      error = e instanceof Error ? e.message : String(e);
    }
    const attempts = row.attempts + 1;
    if (error === undefined) {
      if (row.kind === 'job') await cat.deleteOutbox(this.o.db, row.id);
      else await cat.markDelivered(this.o.db, row.id, Date.now());
      this.o.onResult?.(row.kind, true);
      return;
    }
    const giveUp = row.kind === 'job' ? invalid || refused !== undefined : attempts >= this.o.maxAttempts;
    await cat.markFailedAttempt(this.o.db, row.id, error, giveUp ? null : Date.now() + this.backoff(attempts, row.kind));
    this.o.onResult?.(row.kind, false);
    this.o.logger[giveUp ? 'error' : 'warn']({ outbox_id: row.id, kind: row.kind, target: row.target, attempts, error }, giveUp ? 'delivery given up' : 'delivery failed; will retry');
    if (refused && this.o.onJobRefused) {
      await this.o.onJobRefused(refused.job, refused).catch((e: unknown) => this.o.logger.error({ job_id: refused!.job.job_id, err: (e as Error).message }, 'the refused job\'s failure could not be recorded'));
    }
  }

  private async post(row: cat.OutboxRow): Promise<void> {
    const body = Buffer.from(row.body, 'utf8');
    const res = await safeFetch(row.target, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', 'x-signature': signCallbackBody(body, this.o.key) },
      allowPrivate: this.o.allowPrivateUrls,
      timeoutMs: this.o.timeoutMs,
      maxRedirects: 0,
      maxBytes: 64 * 1024,
      field: 'callback_url',
    });
    await readBody(res).catch(() => undefined);
    if (res.status < 200 || res.status >= 300) throw new Error(`callback answered HTTP ${res.status}`);
  }
}
