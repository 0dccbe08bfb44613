/**
 * The conformance suite every translation engine passes. Call it inside a vitest file with a
 * factory that builds the engine (against a real binary or a local HTTP server speaking the
 * engine's wire format) for one locale pair it supports.
 */
import { describe, expect, it } from 'vitest';
import { engineContractProblems, type Progress } from '@dub/core';
import type { Translator } from '../types.js';

export interface ConformanceSubject {
  translator: Translator;
  sourceLocale: string;
  targetLocale: string;
}

export interface ConformanceOptions {
  /** Build the engine; `maxBatchSegments` must be passed to it so batching is exercised. */
  create(opts: { maxBatchSegments: number }): Promise<ConformanceSubject> | ConformanceSubject;
  /** Whether `translated` is a plausible translation of `source` in the target language. */
  looksTranslated(source: string, translated: string): boolean;
  /** Source-language lines (at least 5) used as segments. */
  lines: string[];
}

export function translatorConformance(name: string, opts: ConformanceOptions): void {
  describe(`translator conformance: ${name}`, () => {
    const segs = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ id: `seg-${String(i + 1).padStart(4, '0')}`, text: opts.lines[i % opts.lines.length]!, speaker: i % 2 ? 'B' : 'A', duration: 1.5 + (i % 3) }));

    it('is an Engine: id, label, dispose()', async () => expect(engineContractProblems((await opts.create({ maxBatchSegments: 2 })).translator)).toEqual([]));

    it('supports its pair', async () => {
      const s = await opts.create({ maxBatchSegments: 2 });
      expect(await s.translator.supports(s.sourceLocale, s.targetLocale)).toEqual({ supported: true });
    });

    it('returns [] for no segments', async () => {
      const s = await opts.create({ maxBatchSegments: 2 });
      expect(await s.translator.translate({ sourceLocale: s.sourceLocale, targetLocale: s.targetLocale, segments: [] })).toEqual([]);
    });

    it('translates every segment once, in input order, across batches, reporting progress', async () => {
      const s = await opts.create({ maxBatchSegments: 2 });
      const input = segs(7);
      const progress: Progress[] = [];
      const out = await s.translator.translate(
        { sourceLocale: s.sourceLocale, targetLocale: s.targetLocale, segments: input, context: 'a short test video' },
        { onProgress: (p) => progress.push(p) },
      );
      expect(out.map((o) => o.id)).toEqual(input.map((i) => i.id));
      for (const [i, o] of out.entries()) {
        expect(typeof o.text).toBe('string');
        expect(o.text.length).toBeGreaterThan(0);
        expect(opts.looksTranslated(input[i]!.text, o.text), `${input[i]!.text} -> ${o.text}`).toBe(true);
      }
      expect(progress.length).toBeGreaterThanOrEqual(4);
      expect(progress.at(-1)!.fraction).toBe(1);
      expect(progress.every((p) => p.stage === 'translation')).toBe(true);
    });

    it('gives empty text for empty or blank segments and keeps their place', async () => {
      const s = await opts.create({ maxBatchSegments: 2 });
      const input = [
        { id: 'a', text: opts.lines[0]! },
        { id: 'b', text: '   ' },
        { id: 'c', text: '' },
        { id: 'd', text: opts.lines[1]! },
      ];
      const out = await s.translator.translate({ sourceLocale: s.sourceLocale, targetLocale: s.targetLocale, segments: input });
      expect(out.map((o) => o.id)).toEqual(['a', 'b', 'c', 'd']);
      expect(out[1]!.text).toBe('');
      expect(out[2]!.text).toBe('');
      expect(out[0]!.text).not.toBe('');
      expect(out[3]!.text).not.toBe('');
    });

    it('keeps markup-like characters as text', async () => {
      const s = await opts.create({ maxBatchSegments: 2 });
      const out = await s.translator.translate({
        sourceLocale: s.sourceLocale,
        targetLocale: s.targetLocale,
        segments: [{ id: 'x', text: `${opts.lines[0]} Tom & Jerry <3` }],
      });
      expect(out[0]!.text).toContain('&');
      expect(out[0]!.text).not.toContain('&amp;');
      expect(out[0]!.text).not.toContain('&lt;');
    });

    it('rejects duplicate ids before doing any work', async () => {
      const s = await opts.create({ maxBatchSegments: 2 });
      await expect(
        s.translator.translate({ sourceLocale: s.sourceLocale, targetLocale: s.targetLocale, segments: [{ id: 'a', text: 'x' }, { id: 'a', text: 'y' }] }),
      ).rejects.toMatchObject({ code: 'validation_error' });
    });

    it('stops with code "aborted" when the signal has fired', async () => {
      const s = await opts.create({ maxBatchSegments: 2 });
      const ac = new AbortController();
      ac.abort('shutdown');
      await expect(
        s.translator.translate({ sourceLocale: s.sourceLocale, targetLocale: s.targetLocale, segments: segs(3) }, { signal: ac.signal }),
      ).rejects.toMatchObject({ code: 'aborted' });
    });
  });
}
