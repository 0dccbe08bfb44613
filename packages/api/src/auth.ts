/**
 * Bearer API keys and their organizations. Keys are compared in constant time over SHA-256
 * digests (equal length whatever the input), and every known key is compared so the time does not
 * depend on which key matched.
 */
import crypto from 'node:crypto';
import type { ApiKey } from './options.js';

export interface Principal {
  org: string;
  /** Stable id of the key for rate limiting and logs (a digest prefix, never the key). */
  keyId: string;
}

const digest = (s: string): Buffer => crypto.hash('sha256', s, 'buffer');

export class KeyRing {
  private readonly entries: { hash: Buffer; org: string; keyId: string }[];

  constructor(keys: readonly ApiKey[]) {
    this.entries = keys.map((k) => {
      const hash = digest(k.key);
      return { hash, org: k.org, keyId: hash.subarray(0, 6).toString('hex') };
    });
  }

  get size(): number {
    return this.entries.length;
  }

  /** The principal of an Authorization header value, or undefined. */
  authenticate(header: string | undefined): Principal | undefined {
    if (!header) return undefined;
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!m) return undefined;
    const h = digest(m[1]!);
    let found: Principal | undefined;
    for (const e of this.entries) if (crypto.timingSafeEqual(e.hash, h) && !found) found = { org: e.org, keyId: e.keyId };
    return found;
  }
}

/** A fixed one-minute window per key, in memory. */
export class RateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(private readonly perMinute: number, private readonly now: () => number = Date.now) {}

  /** undefined when allowed, else the seconds until the window resets (Retry-After). */
  hit(id: string): number | undefined {
    if (this.perMinute <= 0) return undefined;
    const t = this.now();
    const start = t - (t % 60_000);
    let w = this.windows.get(id);
    if (!w || w.start !== start) {
      w = { start, count: 0 };
      this.windows.set(id, w);
      if (this.windows.size > 10_000) for (const [k, v] of this.windows) if (v.start !== start) this.windows.delete(k);
    }
    w.count++;
    if (w.count > this.perMinute) return Math.max(1, Math.ceil((start + 60_000 - t) / 1000));
    return undefined;
  }
}
