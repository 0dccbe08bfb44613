/**
 * Streams and consumers of the distributed mode, created idempotently by `ensureStreams()`:
 * - DUB_JOBS: work-queue stream on `dub.jobs.>` (a message is removed once acked or termed),
 *   deduplicated by the Nats-Msg-Id header (= job_id) within `duplicateWindowMs`;
 *   one durable pull consumer (`dub-worker`) shared by every worker, explicit ack.
 * - DUB_EVENTS: limits-retention stream on `dub.events.>` (kept `eventsMaxAgeMs`);
 *   the API's durable consumer (`dub-api`) reads it through NatsEventFeed.
 * Names and prefixes are overridable so tests (or two deployments) can share a server.
 */
import { AckPolicy, DeliverPolicy, JetStreamApiCodes, JetStreamApiError, RetentionPolicy, StorageType, type JetStreamManager } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { EVENT_SUBJECT_PREFIX, EVENTS_STREAM, JOB_SUBJECT_PREFIX, JOBS_STREAM, type JobType } from '@dub/core';

export interface NatsNames {
  jobsStream: string;
  eventsStream: string;
  /** Jobs are published to `<jobsPrefix>.<type>`. */
  jobsPrefix: string;
  /** Events are published to `<eventsPrefix>.<asset_id>`. */
  eventsPrefix: string;
  /** Durable pull consumer of the workers on the jobs stream. */
  workerConsumer: string;
  /** Durable consumer of the API on the events stream. */
  eventsConsumer: string;
  /** Key-value bucket where each worker publishes what it serves (capabilities.ts). */
  capabilitiesBucket: string;
}

export const DEFAULT_NATS_NAMES: NatsNames = {
  jobsStream: JOBS_STREAM,
  eventsStream: EVENTS_STREAM,
  jobsPrefix: JOB_SUBJECT_PREFIX,
  eventsPrefix: EVENT_SUBJECT_PREFIX,
  workerConsumer: 'dub-worker',
  eventsConsumer: 'dub-api',
  capabilitiesBucket: 'dub-workers',
};

export function resolveNames(n: Partial<NatsNames> = {}): NatsNames {
  return { ...DEFAULT_NATS_NAMES, ...n };
}

export function jobSubjectOf(names: NatsNames, type: JobType): string {
  return `${names.jobsPrefix}.${type}`;
}

export function eventSubjectOf(names: NatsNames, assetId: string): string {
  return `${names.eventsPrefix}.${assetId}`;
}

export interface TopologyOptions {
  names?: Partial<NatsNames>;
  /** Ack wait of the worker consumer; workers heartbeat (`working()`) at a third of it. Default 30 s. */
  ackWaitMs?: number;
  /** Deduplication window of job_ids on the jobs stream. Default 24 h. */
  duplicateWindowMs?: number;
  /** How long events are kept. Default 7 days. */
  eventsMaxAgeMs?: number;
  /** Stream replicas (clustered NATS). Default 1. */
  replicas?: number;
}

export interface ResolvedTopology {
  names: NatsNames;
  ackWaitMs: number;
  duplicateWindowMs: number;
  eventsMaxAgeMs: number;
  replicas: number;
}

export function resolveTopology(o: TopologyOptions = {}): ResolvedTopology {
  return {
    names: resolveNames(o.names),
    ackWaitMs: o.ackWaitMs ?? 30_000,
    duplicateWindowMs: o.duplicateWindowMs ?? 24 * 3_600_000,
    eventsMaxAgeMs: o.eventsMaxAgeMs ?? 7 * 24 * 3_600_000,
    replicas: o.replicas ?? 1,
  };
}

function isNotFound(e: unknown): boolean {
  return e instanceof JetStreamApiError && (e.code === JetStreamApiCodes.StreamNotFound || e.code === JetStreamApiCodes.ConsumerNotFound);
}

async function upsertStream(jsm: JetStreamManager, name: string, cfg: Record<string, unknown>): Promise<void> {
  try {
    await jsm.streams.info(name);
  } catch (e) {
    if (!isNotFound(e)) throw e;
    await jsm.streams.add({ name, ...cfg });
    return;
  }
  await jsm.streams.update(name, cfg);
}

async function upsertConsumer(jsm: JetStreamManager, stream: string, name: string, cfg: Record<string, unknown>, update: boolean): Promise<void> {
  try {
    await jsm.consumers.info(stream, name);
  } catch (e) {
    if (!isNotFound(e)) throw e;
    await jsm.consumers.add(stream, { durable_name: name, ...cfg });
    return;
  }
  if (update) await jsm.consumers.update(stream, name, cfg);
}

/**
 * Create or update both streams, and create both durable consumers when missing. Safe to call
 * from every process. An existing consumer is updated only with `updateWorkerConsumer` (the
 * worker daemon, whose `ack_wait` it is), so an API front opening the queue never resets it.
 */
export async function ensureStreams(jsm: JetStreamManager, o: TopologyOptions | ResolvedTopology = {}, opts: { updateWorkerConsumer?: boolean } = {}): Promise<ResolvedTopology> {
  const t = 'replicas' in o && 'names' in o && typeof (o as ResolvedTopology).ackWaitMs === 'number' ? (o as ResolvedTopology) : resolveTopology(o);
  const n = t.names;
  await upsertStream(jsm, n.jobsStream, {
    subjects: [`${n.jobsPrefix}.>`],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    duplicate_window: nanos(t.duplicateWindowMs),
    num_replicas: t.replicas,
  });
  await upsertStream(jsm, n.eventsStream, {
    subjects: [`${n.eventsPrefix}.>`],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    max_age: nanos(t.eventsMaxAgeMs),
    duplicate_window: nanos(Math.min(t.eventsMaxAgeMs, 10 * 60_000)),
    num_replicas: t.replicas,
  });
  // max_deliver stays unlimited: the worker enforces its own maxDeliver so the last delivery is
  // failed with a failure event instead of being left silently in the work queue.
  await upsertConsumer(jsm, n.jobsStream, n.workerConsumer, {
    ack_policy: AckPolicy.Explicit,
    ack_wait: nanos(t.ackWaitMs),
    max_deliver: -1,
    max_ack_pending: 10_000,
  }, opts.updateWorkerConsumer ?? false);
  await upsertConsumer(jsm, n.eventsStream, n.eventsConsumer, {
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: nanos(30_000),
    max_deliver: -1,
    max_ack_pending: 1000,
  }, false);
  return t;
}
