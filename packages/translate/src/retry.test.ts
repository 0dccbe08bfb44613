import { describe, expect, it } from 'vitest';
import { makeBatches } from './batching.js';
import { checkBatchResult } from './base-translator.js';
import { charBudget } from './length-budget.js';
import { DEFAULT_RETRY, backoffDelay, parseRetryAfter, sleep } from './retry.js';

describe('retry helpers', () => {
  it('doubles the backoff up to the cap, with half of it jittered', () => {
    const o = { ...DEFAULT_RETRY, baseDelayMs: 100, maxDelayMs: 1000 };
    expect([1, 2, 3, 4, 5].map((a) => backoffDelay(a, o, () => 0))).toEqual([50, 100, 200, 400, 500]);
    expect([1, 2, 3, 4, 5].map((a) => backoffDelay(a, o, () => 1))).toEqual([100, 200, 400, 800, 1000]);
  });

  it('parses Retry-After seconds and dates', () => {
    expect(parseRetryAfter('3')).toBe(3000);
    expect(parseRetryAfter('0.5')).toBe(500);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4_000)).toBe(6_000);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
  });

  it('sleep ends early with AbortedError', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 20);
    await expect(sleep(10_000, ac.signal)).rejects.toMatchObject({ code: 'aborted' });
  });
});

describe('batching and checks', () => {
  it('splits by count and by characters, keeping order', () => {
    const segs = ['aaaa', 'bb', 'cccccc', 'd', 'e'].map((text, i) => ({ id: String(i), text }));
    expect(makeBatches(segs, { maxSegments: 2, maxChars: 100 }).map((b) => b.map((s) => s.id))).toEqual([['0', '1'], ['2', '3'], ['4']]);
    expect(makeBatches(segs, { maxSegments: 10, maxChars: 7 }).map((b) => b.map((s) => s.id))).toEqual([['0', '1'], ['2', '3'], ['4']]);
    expect(makeBatches([{ id: 'x', text: 'x'.repeat(50) }], { maxSegments: 10, maxChars: 7 })).toHaveLength(1);
  });

  it('accepts a reply in any order and returns it in batch order', () => {
    const segs = [{ id: 'a', text: 'x' }, { id: 'b', text: 'y' }];
    expect(checkBatchResult('e', segs, [{ id: 'b', text: ' B ' }, { id: 'a', text: 'A' }])).toEqual([{ id: 'a', text: 'A' }, { id: 'b', text: 'B' }]);
    expect(() => checkBatchResult('e', segs, [{ id: 'a', text: 'A' }])).toThrow(/no translation for segment\(s\) b/);
    expect(() => checkBatchResult('e', segs, { a: 'A' })).toThrow(/not a list/);
  });

  it('budgets characters from speaking time and language', () => {
    expect(charBudget('es-ES', 2, 'whatever')).toBe(28);
    expect(charBudget('ja-JP', 2, 'whatever')).toBe(16);
    expect(charBudget('zh-CN', 0.5, 'x')).toBe(6);
    expect(charBudget('es-ES', undefined, 'x'.repeat(20))).toBe(22);
  });
});
