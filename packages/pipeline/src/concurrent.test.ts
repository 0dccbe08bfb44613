import { describe, expect, it } from 'vitest';
import { mapConcurrent } from './concurrent.js';

/** A promise and the functions that settle it. */
function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((a, b) => ((resolve = a), (reject = b)));
  return { promise, resolve, reject };
}

describe('mapConcurrent', () => {
  it('runs at most `limit` at once and keeps the items order whatever the finishing order', async () => {
    const gates = [0, 1, 2, 3, 4].map(() => deferred<void>());
    let running = 0;
    let most = 0;
    const started: number[] = [];
    const p = mapConcurrent([10, 11, 12, 13, 14], 2, async (x, i) => {
      started.push(i);
      most = Math.max(most, ++running);
      await gates[i]!.promise;
      running--;
      return x * 2;
    });
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([0, 1]);
    gates[1]!.resolve();
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([0, 1, 2]);
    for (const i of [4, 3, 2, 0]) gates[i]!.resolve();
    expect(await p).toEqual([20, 22, 24, 26, 28]);
    expect(most).toBe(2);
  });

  it('starts nothing after a failure and rejects with the first error once the started ones settled', async () => {
    const slow = deferred<void>();
    const started: number[] = [];
    let settled = 0;
    const p = mapConcurrent([0, 1, 2, 3], 2, async (i) => {
      started.push(i);
      if (i === 1) throw new Error('line 1 failed');
      await slow.promise;
      settled++;
      return i;
    });
    let done = false;
    void p.catch(() => (done = true));
    await new Promise((r) => setImmediate(r));
    expect(done).toBe(false);
    slow.resolve();
    await expect(p).rejects.toThrow('line 1 failed');
    expect(started).toEqual([0, 1]);
    expect(settled).toBe(1);
  });

  it('runs one at a time with limit 1 and handles no items', async () => {
    const order: string[] = [];
    await mapConcurrent(['a', 'b'], 1, async (x) => {
      order.push(`start ${x}`);
      await new Promise((r) => setImmediate(r));
      order.push(`end ${x}`);
    });
    expect(order).toEqual(['start a', 'end a', 'start b', 'end b']);
    expect(await mapConcurrent([], 3, async () => 1)).toEqual([]);
  });
});
