/**
 * Prometheus metrics of a worker, in the text exposition format written by hand, and the
 * health/metrics HTTP server (plain node:http): GET /healthz, GET /metrics.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WorkerEvent } from '@dub/core';

const STAGE_BUCKETS = [0.05, 0.25, 1, 5, 15, 60, 300, 900, 3600];

function esc(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function labels(l: Record<string, string>): string {
  const parts = Object.entries(l).map(([k, v]) => `${k}="${esc(v)}"`);
  return parts.length ? `{${parts.join(',')}}` : '';
}

function num(v: number): string {
  return Number.isFinite(v) ? String(v) : v > 0 ? '+Inf' : v < 0 ? '-Inf' : 'NaN';
}

class Histogram {
  readonly counts = new Map<string, { labels: Record<string, string>; buckets: number[]; sum: number; count: number }>();
  constructor(readonly buckets: number[]) {}
  observe(l: Record<string, string>, v: number): void {
    const k = labels(l);
    let h = this.counts.get(k);
    if (!h) {
      h = { labels: l, buckets: this.buckets.map(() => 0), sum: 0, count: 0 };
      this.counts.set(k, h);
    }
    for (let i = 0; i < this.buckets.length; i++) if (v <= this.buckets[i]) h.buckets[i]++;
    h.sum += v;
    h.count++;
  }
  render(name: string, out: string[]): void {
    for (const h of this.counts.values()) {
      for (let i = 0; i < this.buckets.length; i++) out.push(`${name}_bucket${labels({ ...h.labels, le: String(this.buckets[i]) })} ${h.buckets[i]}`);
      out.push(`${name}_bucket${labels({ ...h.labels, le: '+Inf' })} ${h.count}`);
      out.push(`${name}_sum${labels(h.labels)} ${num(h.sum)}`);
      out.push(`${name}_count${labels(h.labels)} ${h.count}`);
    }
  }
}

class Counter {
  readonly values = new Map<string, { labels: Record<string, string>; value: number }>();
  inc(l: Record<string, string>, by = 1): void {
    const k = labels(l);
    const c = this.values.get(k);
    if (c) c.value += by;
    else this.values.set(k, { labels: l, value: by });
  }
  get(l: Record<string, string>): number {
    return this.values.get(labels(l))?.value ?? 0;
  }
  render(name: string, out: string[]): void {
    for (const c of this.values.values()) out.push(`${name}${labels(c.labels)} ${num(c.value)}`);
  }
}

/** Gauges read when /metrics is scraped. */
export interface GaugeSource {
  jobsInFlight(): number;
  concurrency(): number;
  connected(): boolean;
  /** Pending and ack-pending messages of the worker consumer (undefined when unknown). */
  queue(): Promise<{ pending: number; ackPending: number } | undefined>;
  limits(): Record<string, { capacity: number; inUse: number; waiting: number }>;
}

export type JobOutcomeLabel = 'done' | 'retry' | 'failed' | 'aborted' | 'invalid';

export class WorkerMetrics {
  readonly jobs = new Counter();
  readonly failures = new Counter();
  readonly events = new Counter();
  readonly stageSeconds = new Histogram(STAGE_BUCKETS);
  readonly jobSeconds = new Histogram(STAGE_BUCKETS);

  jobFinished(type: string, outcome: JobOutcomeLabel, seconds: number, code?: string): void {
    this.jobs.inc({ type, outcome });
    if (outcome !== 'retry' && outcome !== 'aborted') this.jobSeconds.observe({ type, outcome }, seconds);
    if (code && (outcome === 'failed' || outcome === 'retry' || outcome === 'invalid')) this.failures.inc({ type, code, final: outcome === 'retry' ? 'false' : 'true' });
  }

  /** Every published event passes here; stage durations come from stage_done events. */
  observeEvent(e: WorkerEvent): void {
    this.events.inc({ type: e.type });
    if (e.type === 'stage_done') this.stageSeconds.observe({ stage: e.stage, cached: String(e.cached) }, e.seconds);
  }

  async render(g: GaugeSource): Promise<string> {
    const out: string[] = [];
    const head = (name: string, type: string, help: string) => out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    head('dub_worker_up', 'gauge', '1 while the worker is connected to NATS.');
    out.push(`dub_worker_up ${g.connected() ? 1 : 0}`);
    head('dub_worker_jobs_in_flight', 'gauge', 'Jobs running now.');
    out.push(`dub_worker_jobs_in_flight ${g.jobsInFlight()}`);
    head('dub_worker_concurrency', 'gauge', 'Jobs this worker runs at once.');
    out.push(`dub_worker_concurrency ${g.concurrency()}`);
    const q = await g.queue();
    head('dub_worker_queue_pending', 'gauge', 'Jobs waiting in the work queue (pending messages of the worker consumer).');
    if (q) out.push(`dub_worker_queue_pending ${q.pending}`);
    head('dub_worker_queue_ack_pending', 'gauge', 'Jobs delivered to some worker and not yet acked.');
    if (q) out.push(`dub_worker_queue_ack_pending ${q.ackPending}`);
    head('dub_worker_jobs_total', 'counter', 'Job deliveries by type and outcome (done, retry, failed, aborted, invalid).');
    this.jobs.render('dub_worker_jobs_total', out);
    head('dub_worker_job_failures_total', 'counter', 'Job failures by type and error code; final="false" for failures that will be retried.');
    this.failures.render('dub_worker_job_failures_total', out);
    head('dub_worker_events_total', 'counter', 'Events published by type.');
    this.events.render('dub_worker_events_total', out);
    head('dub_worker_stage_seconds', 'histogram', 'Stage durations from stage_done events.');
    this.stageSeconds.render('dub_worker_stage_seconds', out);
    head('dub_worker_job_seconds', 'histogram', 'Job durations by type and outcome.');
    this.jobSeconds.render('dub_worker_job_seconds', out);
    head('dub_worker_limit_in_use', 'gauge', 'Slots in use of each named per-stage limit.');
    const lim = g.limits();
    for (const [name, s] of Object.entries(lim)) out.push(`dub_worker_limit_in_use${labels({ name })} ${s.inUse}`);
    head('dub_worker_limit_waiting', 'gauge', 'Jobs waiting for a slot of each named per-stage limit.');
    for (const [name, s] of Object.entries(lim)) out.push(`dub_worker_limit_waiting${labels({ name })} ${s.waiting}`);
    return out.join('\n') + '\n';
  }
}

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

/** GET /healthz (200 when healthy, else 503) and GET /metrics on `port` (0 = any free port). */
export async function startMetricsServer(port: number, host: string, metrics: WorkerMetrics, g: GaugeSource & { healthy(): boolean }): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    const url = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    if (url === '/healthz') {
      const ok = g.healthy();
      res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify({ status: ok ? 'ok' : 'unavailable', connected: g.connected(), jobs_in_flight: g.jobsInFlight() }));
      return;
    }
    if (url === '/metrics') {
      metrics.render(g).then(
        (body) => res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }).end(body),
        (e: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(String((e as Error).message)),
      );
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections(); // a scraper's keep-alive connection must not hold the stop
      }),
  };
}
