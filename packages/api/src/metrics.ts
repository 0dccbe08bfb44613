/** Prometheus metrics in the text exposition format (hand-written; no client library). */

type Labels = Record<string, string>;

function labelKey(l: Labels): string {
  const keys = Object.keys(l);
  if (keys.length === 0) return '';
  return keys
    .sort()
    .map((k) => `${k}="${String(l[k]).replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`)
    .join(',');
}

export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export class Metrics {
  /** Rendered label strings by their raw values (requests repeat the same few label sets). */
  private readonly keyCache = new Map<string, string>();

  private key(l: Labels): string {
    let raw = '';
    for (const k in l) raw += `${k}\u0000${l[k]}\u0001`;
    let k = this.keyCache.get(raw);
    if (k === undefined) {
      k = labelKey(l);
      if (this.keyCache.size < 10_000) this.keyCache.set(raw, k);
    }
    return k;
  }

  private readonly counters = new Map<string, { help: string; values: Map<string, number> }>();
  private readonly histograms = new Map<string, { help: string; values: Map<string, { buckets: number[]; sum: number; count: number }> }>();

  inc(name: string, help: string, labels: Labels = {}, by = 1): void {
    let c = this.counters.get(name);
    if (!c) this.counters.set(name, (c = { help, values: new Map() }));
    const k = this.key(labels);
    c.values.set(k, (c.values.get(k) ?? 0) + by);
  }

  observe(name: string, help: string, labels: Labels, value: number): void {
    let h = this.histograms.get(name);
    if (!h) this.histograms.set(name, (h = { help, values: new Map() }));
    const k = this.key(labels);
    let v = h.values.get(k);
    if (!v) h.values.set(k, (v = { buckets: DURATION_BUCKETS.map(() => 0), sum: 0, count: 0 }));
    DURATION_BUCKETS.forEach((b, i) => {
      if (value <= b) v!.buckets[i]!++;
    });
    v.sum += value;
    v.count++;
  }

  /** Render with extra gauges computed at scrape time. */
  render(gauges: { name: string; help: string; labels?: Labels; value: number }[] = []): string {
    const out: string[] = [];
    for (const [name, c] of this.counters) {
      out.push(`# HELP ${name} ${c.help}`, `# TYPE ${name} counter`);
      for (const [k, v] of c.values) out.push(`${name}${k ? `{${k}}` : ''} ${v}`);
    }
    for (const [name, h] of this.histograms) {
      out.push(`# HELP ${name} ${h.help}`, `# TYPE ${name} histogram`);
      for (const [k, v] of h.values) {
        const pre = k ? `${k},` : '';
        DURATION_BUCKETS.forEach((b, i) => out.push(`${name}_bucket{${pre}le="${b}"} ${v.buckets[i]}`));
        out.push(`${name}_bucket{${pre}le="+Inf"} ${v.count}`, `${name}_sum${k ? `{${k}}` : ''} ${v.sum}`, `${name}_count${k ? `{${k}}` : ''} ${v.count}`);
      }
    }
    const seen = new Set<string>();
    for (const g of gauges) {
      if (!seen.has(g.name)) out.push(`# HELP ${g.name} ${g.help}`, `# TYPE ${g.name} gauge`);
      seen.add(g.name);
      const k = labelKey(g.labels ?? {});
      out.push(`${g.name}${k ? `{${k}}` : ''} ${g.value}`);
    }
    return out.join('\n') + '\n';
  }
}
