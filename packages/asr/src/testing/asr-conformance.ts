/**
 * Conformance suite every ASR engine passes: segments in time order inside the audio, words inside
 * their segment and in order, confidences in [0, 1], no filler tokens, and AbortSignal honoured.
 */
import { describe, expect, it } from 'vitest';
import { AbortedError, engineContractProblems, resolveContext } from '@dub/core';
import type { SpeechAudio } from '../speech-audio.js';
import type { SpeechRegion } from '../vad/types.js';
import type { AsrEngine } from '../asr/types.js';

export interface AsrConformanceOptions {
  audio: () => Promise<SpeechAudio>;
  regions: () => Promise<SpeechRegion[]>;
  locale: string;
  language: string;
  /** Expect at least this many words (0 for plumbing-only engines). */
  minWords: number;
}

export function asrConformance(name: string, create: () => Promise<AsrEngine>, o: AsrConformanceOptions): void {
  describe(`ASR engine conformance: ${name}`, () => {
    it('is an Engine: id, label, dispose()', async () => expect(engineContractProblems(await create())).toEqual([]));
    it('returns well-formed timed segments and words', async () => {
      const e = await create();
      const audio = await o.audio();
      const { segments } = await e.transcribe(audio, { locale: o.locale, language: o.language, regions: await o.regions() }, resolveContext()).finally(() => audio.close());
      const words = segments.flatMap((s) => s.words);
      expect(words.length).toBeGreaterThanOrEqual(o.minWords);
      let prevStart = -1;
      for (const s of segments) {
        expect(s.start).toBeGreaterThanOrEqual(0);
        expect(s.end).toBeGreaterThanOrEqual(s.start);
        expect(s.end).toBeLessThanOrEqual(audio.duration + 1e-6);
        expect(s.start).toBeGreaterThanOrEqual(prevStart);
        prevStart = s.start;
        expect(s.text.trim().length).toBeGreaterThan(0);
        let prev = s.start - 1e-6;
        for (const w of s.words) {
          expect(w.start).toBeGreaterThanOrEqual(prev - 1e-6);
          expect(w.end).toBeGreaterThanOrEqual(w.start);
          expect(w.start).toBeGreaterThanOrEqual(s.start - 1e-6);
          expect(w.end).toBeLessThanOrEqual(s.end + 1e-6);
          expect(w.confidence).toBeGreaterThanOrEqual(0);
          expect(w.confidence).toBeLessThanOrEqual(1);
          expect(w.text).not.toMatch(/^<.*>$|^\[.*\]$|\(\d+\)$/);
          prev = w.start;
        }
      }
    });
    it('stops with AbortedError when the signal has fired', async () => {
      const e = await create();
      const ac = new AbortController();
      ac.abort();
      const audio = await o.audio();
      await expect(e.transcribe(audio, { locale: o.locale, language: o.language, regions: await o.regions() }, resolveContext({ signal: ac.signal }))).rejects.toBeInstanceOf(AbortedError);
      await audio.close();
    });
  });
}
