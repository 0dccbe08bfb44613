/**
 * The conformance suite every separation engine passes (`@dub/separation/testing`), on a real
 * speech + music mix made from the shared recordings:
 *  - in-memory audio: output lengths, rate and channels; separated speech and background each
 *    improve SI-SDR over the mix by several dB; progress per window, ending at 1;
 *  - a longer WAV file: streamed to two WAV files of its length with the same quality, its peak
 *    RSS above that of the short clip by less than the long input's size as float samples
 *    (streaming: memory does not grow with the input);
 *  - abort between windows: rejects with code "aborted" and leaves no partial files;
 *  - input at a rate the engine does not take in memory is refused.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engineContractProblems, type Progress } from '@dub/core';
import { readWav } from '@dub/media';
import type { SeparationEngine } from '../types.js';
import { loadMixFixture, makeSpeechMusicMix, type LoadedMixFixture, type MixFixture } from './fixtures.js';
import { siSdr } from './metrics.js';

export interface ConformanceOptions {
  /** Folder with jfk.wav and music-coffee.wav. */
  mediaDir: string;
  /** Length of the quality clip in seconds (default 8). */
  clipSeconds?: number;
  /** Length of the longer clip streamed from a WAV file, in seconds (default 30). */
  longSeconds?: number;
  /** Minimum SI-SDR improvement over the mix, in dB, of speech and of background (default 6). */
  minImprovementDb?: number;
  /** Peak RSS growth allowed on the long input, as a fraction of its size as float samples (default 1). */
  maxRssGrowth?: number;
  /** Time allowed for one short-clip test (default 300 s: HTDemucs on 2 busy cores is slow). */
  timeoutMs?: number;
}

export function separationConformance(name: string, createEngine: () => Promise<SeparationEngine>, options: ConformanceOptions): void {
  const clipSeconds = options.clipSeconds ?? 8;
  const longSeconds = options.longSeconds ?? 30;
  const timeoutMs = options.timeoutMs ?? 300_000;
  const minImprovement = options.minImprovementDb ?? 6;
  const maxRssGrowth = options.maxRssGrowth ?? 1;

  describe(`separation engine conformance: ${name}`, () => {
    let dir: string;
    let engine: SeparationEngine;
    let clip: LoadedMixFixture;
    let shortPeak: number | undefined;
    let longFixture: MixFixture;

    beforeAll(async () => {
      dir = await fs.mkdtemp(path.join(os.tmpdir(), 'dub-separation-conformance-'));
      engine = await createEngine();
      clip = await loadMixFixture(await makeSpeechMusicMix({ mediaDir: options.mediaDir, dir: path.join(dir, 'clip'), seconds: clipSeconds, sampleRate: engine.sampleRate }));
      // Files only: the long references are read after its run, so they do not count in its peak.
      longFixture = await makeSpeechMusicMix({ mediaDir: options.mediaDir, dir: path.join(dir, 'long'), seconds: longSeconds, sampleRate: engine.sampleRate, musicStart: 5 });
    });

    afterAll(async () => {
      await engine?.dispose();
      if (dir) await fs.rm(dir, { recursive: true, force: true });
    });

    it('is an Engine: id, label, dispose()', () => expect(engineContractProblems(engine)).toEqual([]));

    it('separates audio in memory into speech and background', async () => {
      const progress: Progress[] = [];
      const { result: out, peak } = await withPeakRss((sample) => engine.separate(clip.mix, { onProgress: (p) => (progress.push(p), sample()) }));
      shortPeak = peak;
      for (const track of [out.speech, out.background]) {
        expect(track.sampleRate).toBe(engine.sampleRate);
        expect(track.channels).toHaveLength(engine.channels);
        for (const c of track.channels) expect(c.length).toBe(clip.frames);
      }
      const speechGain = siSdr(out.speech.channels, clip.speech.channels) - siSdr(clip.mix.channels, clip.speech.channels);
      const backgroundGain = siSdr(out.background.channels, clip.music.channels) - siSdr(clip.mix.channels, clip.music.channels);
      expect(speechGain).toBeGreaterThan(minImprovement);
      expect(backgroundGain).toBeGreaterThan(minImprovement);
      // Progress per window, increasing, ending at 1.
      expect(progress.length).toBeGreaterThanOrEqual(2);
      for (let i = 1; i < progress.length; i++) expect(progress[i]!.fraction).toBeGreaterThan(progress[i - 1]!.fraction);
      expect(progress.at(-1)!.fraction).toBe(1);
    }, timeoutMs);

    it('streams a longer WAV file to two WAV files in bounded memory', async () => {
      const inputBytes = longFixture.frames * 2 * 4;
      const speechPath = path.join(dir, 'long-speech.wav');
      const backgroundPath = path.join(dir, 'long-background.wav');
      if (shortPeak === undefined) shortPeak = (await withPeakRss((sample) => engine.separate(clip.mix, { onProgress: sample }))).peak;
      const { result: out, peak } = await withPeakRss((sample) => engine.separate({ path: longFixture.mixPath, speechPath, backgroundPath, format: 'float32' }, { onProgress: sample }));
      expect(out).toEqual({ speech: speechPath, background: backgroundPath });
      const long = await loadMixFixture(longFixture);
      const speech = await readWav(speechPath);
      const background = await readWav(backgroundPath);
      expect(speech.sampleRate).toBe(engine.sampleRate);
      expect(speech.channels).toHaveLength(engine.channels);
      expect(speech.channels[0]!.length).toBe(long.frames);
      expect(background.channels[0]!.length).toBe(long.frames);
      expect(siSdr(speech.channels, long.speech.channels) - siSdr(long.mix.channels, long.speech.channels)).toBeGreaterThan(minImprovement);
      expect(siSdr(background.channels, long.music.channels) - siSdr(long.mix.channels, long.music.channels)).toBeGreaterThan(minImprovement);
      // Streaming: the long file needs no more memory than the short clip in memory did (the
      // model's own peak is the same for both); holding the input or the tracks would add
      // several times inputBytes.
      const growth = peak - shortPeak;
      expect(growth, `peak RSS ${(peak / 1e6).toFixed(0)} MB on ${longSeconds} s vs ${(shortPeak / 1e6).toFixed(0)} MB on ${clipSeconds} s; input ${(inputBytes / 1e6).toFixed(1)} MB as float`).toBeLessThan(inputBytes * maxRssGrowth);
    }, timeoutMs * 4);

    it('stops between windows when aborted and leaves no partial files', async () => {
      const controller = new AbortController();
      const speechPath = path.join(dir, 'aborted-speech.wav');
      const backgroundPath = path.join(dir, 'aborted-background.wav');
      let windows = 0;
      const run = engine.separate(
        { path: clip.mixPath, speechPath, backgroundPath },
        {
          signal: controller.signal,
          onProgress: () => {
            windows++;
            controller.abort();
          },
        },
      );
      await expect(run).rejects.toMatchObject({ code: 'aborted' });
      expect(windows).toBe(1);
      await expect(fs.stat(speechPath)).rejects.toMatchObject({ code: 'ENOENT' });
      await expect(fs.stat(backgroundPath)).rejects.toMatchObject({ code: 'ENOENT' });
      // The engine is still usable after an aborted run.
      const again = new AbortController();
      again.abort();
      await expect(engine.separate(clip.mix, { signal: again.signal })).rejects.toMatchObject({ code: 'aborted' });
    });

    it('refuses in-memory audio at another sample rate', async () => {
      const wrong = { sampleRate: engine.sampleRate / 2, channels: [new Float32Array(1000), new Float32Array(1000)] };
      await expect(engine.separate(wrong)).rejects.toMatchObject({ code: 'validation_error' });
    });
  });
}

/** Run `fn`, sampling RSS every 20 ms (when the event loop is free) and whenever it calls `sample`. */
async function withPeakRss<T>(fn: (sample: () => void) => Promise<T>): Promise<{ result: T; peak: number }> {
  let peak = process.memoryUsage().rss;
  const sample = (): void => {
    peak = Math.max(peak, process.memoryUsage().rss);
  };
  const timer = setInterval(sample, 20);
  try {
    const result = await fn(sample);
    sample();
    return { result, peak };
  } finally {
    clearInterval(timer);
  }
}

function maxAbsDiff(a: readonly Float32Array[], b: readonly Float32Array[]): number {
  let m = 0;
  for (let c = 0; c < a.length; c++) {
    const x = a[c]!;
    const y = b[c]!;
    for (let i = 0; i < x.length; i++) m = Math.max(m, Math.abs(x[i]! - y[i]!));
  }
  return m;
}
