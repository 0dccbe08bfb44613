import { describe, expect, it } from 'vitest';
import { startMetricsServer, WorkerMetrics, type GaugeSource } from './metrics.js';
import { resolveRunnerOptions, retryDelayMs } from './options.js';

const gauges = (over: Partial<GaugeSource & { healthy(): boolean }> = {}) => ({
  jobsInFlight: () => 2,
  concurrency: () => 4,
  connected: () => true,
  healthy: () => true,
  queue: async () => ({ pending: 7, ackPending: 2 }),
  limits: () => ({ gpu: { capacity: 1, inUse: 1, waiting: 3 } }),
  ...over,
});

const ev = { v: 1 as const, job_id: 'j', asset_id: 'a', at: 'now', job_type: 'prepare-asset' };

describe('worker metrics', () => {
  it('renders counters, gauges and stage histograms in the text exposition format', async () => {
    const m = new WorkerMetrics();
    m.observeEvent({ ...ev, type: 'stage_done', stage: 'separation', cached: false, seconds: 3 });
    m.observeEvent({ ...ev, type: 'stage_done', stage: 'separation', cached: false, seconds: 0.1 });
    m.jobFinished('prepare-asset', 'done', 4);
    m.jobFinished('prepare-asset', 'failed', 1, 'missing_audio_track');
    m.jobFinished('generate-version', 'retry', 1, 'upstream_error');
    const text = await m.render(gauges());
    expect(text).toContain('# TYPE dub_worker_stage_seconds histogram');
    expect(text).toContain('dub_worker_stage_seconds_bucket{stage="separation",cached="false",le="0.25"} 1');
    expect(text).toContain('dub_worker_stage_seconds_bucket{stage="separation",cached="false",le="5"} 2');
    expect(text).toContain('dub_worker_stage_seconds_bucket{stage="separation",cached="false",le="+Inf"} 2');
    expect(text).toContain('dub_worker_stage_seconds_sum{stage="separation",cached="false"} 3.1');
    expect(text).toContain('dub_worker_stage_seconds_count{stage="separation",cached="false"} 2');
    expect(text).toContain('dub_worker_jobs_in_flight 2');
    expect(text).toContain('dub_worker_queue_pending 7');
    expect(text).toContain('dub_worker_jobs_total{type="prepare-asset",outcome="failed"} 1');
    expect(text).toContain('dub_worker_job_failures_total{type="prepare-asset",code="missing_audio_track",final="true"} 1');
    expect(text).toContain('dub_worker_job_failures_total{type="generate-version",code="upstream_error",final="false"} 1');
    expect(text).toContain('dub_worker_limit_waiting{name="gpu"} 3');
    expect(text).toContain('dub_worker_events_total{type="stage_done"} 2');
    for (const line of text.trim().split('\n')) expect(line).toMatch(/^(# (HELP|TYPE) \w+ .+|\w+(\{[^}]*\})? [-+\d.e]+|\w+(\{[^}]*\})? \+Inf)$/);
  });

  it('serves /healthz and /metrics over HTTP', async () => {
    let healthy = true;
    const srv = await startMetricsServer(0, '127.0.0.1', new WorkerMetrics(), gauges({ healthy: () => healthy }));
    try {
      const base = `http://127.0.0.1:${srv.port}`;
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      healthy = false;
      const h = await fetch(`${base}/healthz`);
      expect(h.status).toBe(503);
      expect(await h.json()).toMatchObject({ status: 'unavailable', jobs_in_flight: 2 });
      const m = await fetch(`${base}/metrics`);
      expect(m.headers.get('content-type')).toContain('text/plain; version=0.0.4');
      expect(await m.text()).toContain('dub_worker_concurrency 4');
      expect((await fetch(`${base}/nope`)).status).toBe(404);
    } finally {
      await srv.close();
    }
  });
});

describe('runner options', () => {
  it('backs off exponentially up to the cap', () => {
    const o = resolveRunnerOptions({ backoffBaseMs: 100, backoffMaxMs: 1000 });
    expect([1, 2, 3, 4, 5, 6].map((a) => retryDelayMs(a, o))).toEqual([100, 200, 400, 800, 1000, 1000]);
  });

  it('fills defaults and rejects invalid values', () => {
    expect(resolveRunnerOptions()).toMatchObject({ concurrency: 1, maxDeliver: 5, limits: { gpu: 1 } });
    expect(() => resolveRunnerOptions({ concurrency: 0 })).toThrow(/concurrency/);
    expect(() => resolveRunnerOptions({ limits: { gpu: 1.5 } })).toThrow(/limits.gpu/);
  });
});
