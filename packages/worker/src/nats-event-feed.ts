/**
 * EventFeed over JetStream: a durable pull consumer (default `dub-api`) on the events stream.
 * Events are handled one at a time in stream order; an event is acked after the handler
 * resolved; a throwing handler gets the same event again after a short backoff (the message is
 * kept alive with `working()` meanwhile), so later events never overtake it.
 */
import { jetstream, type Consumer, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { ConflictError, parseWorkerEvent, settlesWithin, silentLogger, type EventFeed, type Logger, type Subscription, type WorkerEvent, type WorkerEventHandler } from '@dub/core';
import { linkNew, linkOver, StreamsClient, type StreamsClientOptions, type StreamsLink } from './nats-client.js';

export interface NatsEventFeedOptions extends StreamsClientOptions {
  /** Messages fetched per pull. Default 64. */
  batch?: number;
  /** Backoff between redeliveries to a throwing handler: base and cap. Defaults 100 ms, 5 s. */
  redeliverBaseMs?: number;
  redeliverMaxMs?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A subscriber's loop: whether it was told to stop, the pull in progress, and its end. */
interface FeedLoop {
  stopped: boolean;
  pull: ConsumerMessages | undefined;
  done: Promise<void>;
}

/** How long a subscriber's stop waits for the event in hand. */
const STOP_WAIT_MS = 5000;
/** How long a pull waits for events on the server. */
const PULL_EXPIRES_MS = 1000;

/** An event whose ack or nak was sent while the server was unreachable (lost: it is delivered again). */
export interface UnacknowledgedEvent {
  type: string;
  job_id: string | undefined;
  seq: number;
  meant: 'ack' | 'nak' | 'term';
}

export class NatsEventFeed extends StreamsClient implements EventFeed {
  private active: FeedLoop | undefined;
  private readonly logger: Logger;
  /** Events acked, naked or termed while NATS was unreachable, since it was last reachable. */
  readonly notAcknowledged: UnacknowledgedEvent[] = [];

  private constructor(link: StreamsLink, private readonly o: NatsEventFeedOptions) {
    super(link);
    this.logger = o.logger ?? silentLogger;
  }

  protected override reconnected(): void {
    this.notAcknowledged.length = 0; // delivered again now
  }

  private settle(m: JsMsg, event: WorkerEvent | undefined, meant: 'ack' | 'nak' | 'term'): void {
    if (meant === 'ack') m.ack();
    else if (meant === 'nak') m.nak();
    else m.term('invalid event');
    if (!this.connected) this.notAcknowledged.push({ type: event?.type ?? 'invalid', job_id: event?.job_id, seq: m.info.streamSequence, meant });
  }

  /** Over an existing connection (not closed by `close()`). */
  static async open(nc: NatsConnection, o: NatsEventFeedOptions = {}): Promise<NatsEventFeed> {
    return new NatsEventFeed(await linkOver(nc, o), o);
  }

  static async connect(servers: string | string[], o: NatsEventFeedOptions = {}): Promise<NatsEventFeed> {
    return new NatsEventFeed(await linkNew(servers, 'dub-events', o), o);
  }

  async subscribe(handler: WorkerEventHandler): Promise<Subscription> {
    if (this.active && !this.active.stopped) throw new ConflictError('this event feed has a subscriber already');
    const consumer = await jetstream(this.nc).consumers.get(this.topology.names.eventsStream, this.topology.names.eventsConsumer);
    const state: FeedLoop = { stopped: false, pull: undefined, done: Promise.resolve() };
    state.done = this.loop(consumer, handler, state);
    this.active = state;
    return { stop: () => this.stopLoop(state, STOP_WAIT_MS) };
  }

  /**
   * Stop a subscriber: no more pulls; the event in hand gets `timeoutMs`. The pull in progress is
   * ended here when NATS is unreachable, else once it has had time to expire (events it brings
   * are naked, so the next subscriber gets them at once). A pull whose connection dropped as it
   * started never ends by itself (the client cancels its heartbeat check while disconnected, and
   * the server's expiry never comes): waiting for it kept `dub serve --nats` from stopping.
   */
  private async stopLoop(state: FeedLoop, timeoutMs: number): Promise<void> {
    state.stopped = true;
    const t0 = Date.now();
    if (this.connected) await settlesWithin(state.done, Math.min(timeoutMs, PULL_EXPIRES_MS + 1000));
    state.pull?.stop();
    if (!(await settlesWithin(state.done, Math.max(0, timeoutMs - (Date.now() - t0))))) this.logger.warn({ wait_ms: timeoutMs }, 'event subscriber still handling an event; stopped without it');
  }

  private async loop(consumer: Consumer, handler: WorkerEventHandler, state: FeedLoop): Promise<void> {
    const batch = this.o.batch ?? 64;
    while (!state.stopped) {
      try {
        const iter = await consumer.fetch({ max_messages: batch, expires: PULL_EXPIRES_MS });
        state.pull = iter;
        if (state.stopped) iter.stop();
        for await (const m of iter) {
          if (state.stopped) {
            this.settle(m, undefined, 'nak');
            continue;
          }
          await this.handle(m, handler, state);
        }
      } catch (e) {
        if (state.stopped) break;
        this.logger.warn({ err: (e as Error).message }, 'event fetch failed; retrying');
        await sleep(500);
      }
    }
  }

  private async handle(m: JsMsg, handler: WorkerEventHandler, state: FeedLoop): Promise<void> {
    let event: WorkerEvent;
    try {
      event = parseWorkerEvent(JSON.parse(m.string()));
    } catch (e) {
      this.logger.error({ subject: m.subject, seq: m.seq, code: 'validation_error', err: (e as Error).message }, 'invalid event; dropped');
      this.settle(m, undefined, 'term');
      return;
    }
    const base = this.o.redeliverBaseMs ?? 100;
    const max = this.o.redeliverMaxMs ?? 5000;
    for (let failures = 0; ; ) {
      try {
        await handler(event);
        this.settle(m, event, 'ack');
        return;
      } catch (e) {
        failures++;
        if (state.stopped) {
          this.settle(m, event, 'nak');
          return;
        }
        const delay = Math.min(max, base * 2 ** (failures - 1));
        this.logger.warn({ event: event.type, job_id: event.job_id, err: (e as Error).message, delay_ms: delay }, 'event handler failed; delivering the event again');
        m.working();
        await sleep(delay);
      }
    }
  }

  /**
   * Stop the subscriber (waiting at most `timeoutMs` for the event in hand and the pull in
   * progress), then drain the connection when this feed opened it (closed without the drain when
   * the server does not answer: NATS unreachable).
   */
  async close(timeoutMs = STOP_WAIT_MS): Promise<void> {
    if (this.active) await this.stopLoop(this.active, timeoutMs);
    await this.closeConnection();
  }
}
