/**
 * What each worker can serve, published to the fleet (`dub worker`, `dub serve --nats`):
 *
 * - Every worker puts one record under its id in the JetStream key-value bucket `dub-workers`
 *   (NatsNames.capabilitiesBucket): the source locales it transcribes, the target locales it
 *   speaks and the source>target pairs it translates, each with the engine of that stage
 *   (the pipeline's PairChecker.capabilities, the same registries a job's stages resolve), its
 *   device, host and handlers module, `at` and `ttl_ms`. It puts it again every heartbeat
 *   (default 10 s); a record older than its `ttl_ms` (3 heartbeats) is a dead worker's, and the
 *   bucket's max age (60 s) removes it; a worker that stops deletes its key.
 * - The API (`dub serve --nats`) reads the live records (FleetCapabilities, re-read at most every
 *   2 s): a pair no live worker serves is 400 before any work, naming the stage and the workers;
 *   while no worker has reported it accepts (the worker then checks the job on arrival).
 *
 * A handlers module other than @dub/pipeline serves what it says: it may export
 * `capabilities(config)`; without it the worker publishes `serves: "unknown"` and the API accepts.
 */
import os from 'node:os';
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { getLocale, type DeviceChoice, type Logger } from '@dub/core';
import type { PairCapabilities, PairJob, PairRefusal } from '@dub/pipeline';

export const DEFAULT_CAPABILITIES_BUCKET = 'dub-workers';
/** How often a worker puts its record again. */
export const CAPABILITY_HEARTBEAT_MS = 10_000;
/** The bucket's max age: a record not put again within it is removed by the server. */
export const CAPABILITY_BUCKET_TTL_MS = 60_000;
/** The longest the API waits for the bucket before it accepts (the worker then checks on arrival). */
const FLEET_READ_TIMEOUT_MS = 3000;

/** One worker's record in the bucket (versioned JSON). */
export interface WorkerCapabilities extends Partial<PairCapabilities> {
  v: 1;
  worker_id: string;
  host: string;
  pid: number;
  device: DeviceChoice | string;
  /** The handlers module its threads run. */
  handlers: string;
  /** `known`: sources, targets and pairs say what it serves; `unknown`: a handlers module that does not say. */
  serves: 'known' | 'unknown';
  started_at: string;
  /** When this record was put (the heartbeat). */
  at: string;
  /** A record older than this (ms after `at`) is a dead worker's. */
  ttl_ms: number;
}

/** What a worker serves, as its handlers module says (PairChecker.capabilities for the pipeline); undefined: it does not say. */
export type CapabilitySource = () => Promise<PairCapabilities | undefined>;

/** A new worker id: host, pid and a random suffix (KV keys allow [-_=./A-Za-z0-9]). */
export function newWorkerId(): string {
  const host = os.hostname().replace(/[^-_A-Za-z0-9]/g, '_').slice(0, 40) || 'host';
  return `${host}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
}

export function openCapabilitiesBucket(nc: NatsConnection, bucket = DEFAULT_CAPABILITIES_BUCKET): Promise<KV> {
  return new Kvm(nc).create(bucket, { history: 1, ttl: CAPABILITY_BUCKET_TTL_MS });
}

/** Puts this worker's record now and every heartbeat; `stop()` deletes it. */
export class CapabilityPublisher {
  private timer: NodeJS.Timeout | undefined;
  private record: WorkerCapabilities | undefined;

  private constructor(
    private readonly kv: KV,
    readonly workerId: string,
    private readonly heartbeatMs: number,
    private readonly logger: Logger,
  ) {}

  static async start(nc: NatsConnection, o: { bucket?: string; workerId?: string; heartbeatMs?: number; device: string; handlers: string; serves: CapabilitySource; logger: Logger }): Promise<CapabilityPublisher> {
    const kv = await openCapabilitiesBucket(nc, o.bucket);
    const heartbeatMs = o.heartbeatMs ?? CAPABILITY_HEARTBEAT_MS;
    const p = new CapabilityPublisher(kv, o.workerId ?? newWorkerId(), heartbeatMs, o.logger);
    const now = new Date().toISOString();
    const caps = await o.serves();
    p.record = { v: 1, worker_id: p.workerId, host: os.hostname(), pid: process.pid, device: o.device, handlers: o.handlers, serves: caps ? 'known' : 'unknown', ...(caps ?? {}), started_at: now, at: now, ttl_ms: 3 * heartbeatMs };
    await p.put();
    o.logger.info({ bucket: o.bucket ?? DEFAULT_CAPABILITIES_BUCKET, worker_id: p.workerId, sources: caps ? Object.keys(caps.sources).length : 'unknown', targets: caps ? Object.keys(caps.targets).length : 'unknown', pairs: caps ? Object.keys(caps.pairs).length : 'unknown' }, 'capabilities published');
    p.timer = setInterval(() => {
      p.put().catch((e: unknown) => o.logger.warn({ err: (e as Error).message }, 'capabilities heartbeat not put'));
    }, heartbeatMs);
    p.timer.unref();
    return p;
  }

  private async put(): Promise<void> {
    const r = { ...this.record!, at: new Date().toISOString() };
    this.record = r;
    await this.kv.put(this.workerId, JSON.stringify(r));
  }

  /** Stop the heartbeat and delete this worker's record (bounded: NATS may be gone). */
  async stop(timeoutMs = 2000): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.kv.delete(this.workerId).catch(() => undefined), new Promise<void>((r) => (timer = setTimeout(r, timeoutMs)))]);
    clearTimeout(timer);
  }
}

/** Whether a record is alive at `now`. */
export function isLive(r: WorkerCapabilities, now = Date.now()): boolean {
  const at = Date.parse(r.at);
  return Number.isFinite(at) && now - at <= r.ttl_ms;
}

/**
 * The pair check of the API in front of NATS workers: against the live workers' records. No live
 * worker (none reported yet, or every record stale) or one whose handlers do not say: accepted.
 * Else a job some live worker serves whole is accepted; otherwise the first stage no live worker
 * serves is the refusal, naming the workers asked.
 */
export class FleetCapabilities {
  private cache: { at: number; value: Promise<WorkerCapabilities[]> } | undefined;

  private constructor(
    private readonly kv: KV,
    private readonly refreshMs: number,
    private readonly connected: () => boolean,
  ) {}

  /** `connected`: whether NATS is reachable now (while it is not, every pair is accepted without asking it). */
  static async open(nc: NatsConnection, o: { bucket?: string; refreshMs?: number; connected?: () => boolean } = {}): Promise<FleetCapabilities> {
    return new FleetCapabilities(await openCapabilitiesBucket(nc, o.bucket), o.refreshMs ?? 2000, o.connected ?? (() => !nc.isClosed()));
  }

  /** Every record in the bucket that is alive now. */
  async live(): Promise<WorkerCapabilities[]> {
    const now = Date.now();
    if (!this.cache || now - this.cache.at > this.refreshMs) {
      const value = this.read();
      this.cache = { at: now, value };
      value.catch(() => (this.cache = undefined));
    }
    return (await this.cache.value).filter((r) => isLive(r));
  }

  private async read(): Promise<WorkerCapabilities[]> {
    const out: WorkerCapabilities[] = [];
    const keys: string[] = [];
    for await (const k of await this.kv.keys()) keys.push(k);
    for (const k of keys) {
      const e = await this.kv.get(k);
      if (!e || e.operation !== 'PUT') continue;
      try {
        const r = e.json<WorkerCapabilities>();
        if (r?.v === 1 && typeof r.at === 'string' && typeof r.ttl_ms === 'number') out.push(r);
      } catch {
        /* not a record of ours */
      }
    }
    return out;
  }

  async check(job: PairJob): Promise<PairRefusal | undefined> {
    // NATS slow or unreachable: accepted (the worker checks the job on arrival)
    if (!this.connected()) return undefined;
    let timer: NodeJS.Timeout | undefined;
    const workers = await Promise.race([this.live().catch(() => [] as WorkerCapabilities[]), new Promise<WorkerCapabilities[]>((r) => (timer = setTimeout(() => r([]), FLEET_READ_TIMEOUT_MS)))]);
    clearTimeout(timer);
    if (workers.length === 0 || workers.some((w) => w.serves !== 'known')) return undefined;
    const sourceField = job.sourceField ?? 'locale';
    const known = job.source !== '';
    const serves = (w: WorkerCapabilities) =>
      (!known || job.sourceSrt || w.sources?.[job.source] !== undefined) &&
      job.targets.every((t) => w.targets?.[t.locale] !== undefined && (!known || t.srt || w.pairs?.[`${job.source}>${t.locale}`] !== undefined));
    if (workers.some(serves)) return undefined;
    const names = `${workers.length} live worker${workers.length > 1 ? 's' : ''}: ${workers.map((w) => `${w.worker_id} (${w.device})`).join(', ')}`;
    const fix = 'run a worker whose engines serve it (npx dub doctor --from SOURCE --to TARGET on that host says what is missing)';
    if (known && !job.sourceSrt && !workers.some((w) => w.sources?.[job.source] !== undefined)) {
      return { stage: 'speech recognition', field: sourceField, source: job.source, missing: `no live worker transcribes ${getLocale(job.source)?.name ?? job.source} (${names})`, fix: `${fix}; or give a source_srt` };
    }
    for (const [i, t] of job.targets.entries()) {
      const field = t.field ?? `languages[${i}].locale`;
      if (known && !t.srt && !workers.some((w) => w.pairs?.[`${job.source}>${t.locale}`] !== undefined)) {
        return { stage: 'translation', field, source: job.source, target: t.locale, missing: `no live worker translates ${job.source} -> ${t.locale} (${names})`, fix: `${fix}; or give the language a reference srt` };
      }
      if (!workers.some((w) => w.targets?.[t.locale] !== undefined)) {
        return { stage: 'speech synthesis', field, source: job.source, target: t.locale, missing: `no live worker speaks ${getLocale(t.locale)?.name ?? t.locale} (${names})`, fix };
      }
    }
    // each stage is served somewhere, but no one worker serves the whole job
    return { stage: 'translation', field: sourceField, source: job.source, missing: `no one live worker serves every stage of this job (${names})`, fix };
  }
}
