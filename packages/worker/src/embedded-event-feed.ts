/**
 * The embedded event feed (EventFeed and EventSink in-process): an event is written to the journal
 * before `publish()` resolves, then delivered in order to the one subscriber; a subscriber that
 * throws gets the same event again with backoff. A delivered event's file is removed.
 */
import { ConflictError, type EventFeed, type EventSink, type Logger, type Subscription, type WorkerEvent, type WorkerEventHandler } from '@dub/core';
import { errInfo, type FaultBackoff } from './embedded-faults.js';
import type { PendingEvent, QueueJournal } from './embedded-journal.js';

export interface EventFeedHooks {
  /** An event of `jobId` was written (it is pending until delivered). */
  published(jobId: string): void;
  /** An event of `jobId` was delivered and its file removed (or its removal is being tried again). */
  delivered(jobId: string): Promise<void>;
}

export class EmbeddedEventFeed implements EventFeed, EventSink {
  private readonly events: PendingEvent[] = [];
  private seq = 0;
  private subscriber: WorkerEventHandler | undefined;
  private delivering: Promise<void> | undefined;

  constructor(
    private readonly journal: QueueJournal,
    private readonly backoff: FaultBackoff,
    private readonly logger: Logger,
    private readonly hooks: EventFeedHooks,
    /** Undelivered events from the journal, in order. */
    restored: PendingEvent[] = [],
  ) {
    for (const pe of restored) {
      this.events.push(pe);
      this.seq = Math.max(this.seq, pe.seq);
    }
  }

  /** Events written and not yet delivered. */
  get pending(): number {
    return this.events.length;
  }

  /** EventSink: persist the event, then queue it for the subscriber. */
  async publish(event: WorkerEvent): Promise<void> {
    const seq = ++this.seq;
    const file = await this.journal.writeEvent(seq, event);
    this.hooks.published(event.job_id);
    // Keep seq order even when two writes finish out of order.
    let i = this.events.length;
    while (i > 0 && this.events[i - 1].seq > seq) i--;
    this.events.splice(i, 0, { seq, jobId: event.job_id, event, file });
    this.deliver();
  }

  async subscribe(handler: WorkerEventHandler): Promise<Subscription> {
    if (this.subscriber) throw new ConflictError('the embedded event feed has a subscriber already');
    this.subscriber = handler;
    this.deliver();
    return {
      stop: async () => {
        if (this.subscriber === handler) this.subscriber = undefined;
        await this.delivering;
      },
    };
  }

  /** Drop the subscriber and wait for the delivery in progress (the queue closes the rest). */
  async close(): Promise<void> {
    this.subscriber = undefined;
    await this.delivering;
  }

  private deliver(): void {
    if (this.delivering || !this.subscriber) return;
    this.delivering = this.deliverLoop()
      .catch((e: unknown) => this.logger.error(errInfo(e), 'event delivery stopped by an error; resuming'))
      .finally(() => {
        this.delivering = undefined;
        if (this.events.length && this.subscriber) this.deliver();
      });
  }

  private async deliverLoop(): Promise<void> {
    let failures = 0;
    while (this.events.length && this.subscriber) {
      const handler = this.subscriber;
      const pe = this.events[0];
      try {
        await handler(pe.event);
      } catch (e) {
        failures++;
        const delay = this.backoff.delay(failures);
        this.logger.warn({ event: pe.event.type, job_id: pe.jobId, err: (e as Error).message, delay_ms: delay }, 'event subscriber failed; delivering the event again');
        await new Promise((r) => setTimeout(r, delay));
        continue;
      }
      failures = 0;
      this.events.shift();
      // Delivered: were its file left behind (and tried again) a restart delivers it again, which is harmless.
      await this.journal.removeFile(pe.file);
      await this.hooks.delivered(pe.jobId);
    }
  }
}
