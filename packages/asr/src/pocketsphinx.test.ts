import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveContext } from '@dub/core';
import { createEngineEnv } from './engine-env.js';
import { openSpeechAudio } from './speech-audio.js';
import { detectSpeech } from './vad/detect-speech.js';
import { createPocketsphinx, resolvePocketsphinxOptions, shareUtterances } from './asr/pocketsphinx.js';
import { ASR_ENGINES } from './asr/registry.js';
import { findExecutable } from './which.js';
import { cleanPocketsphinxWord, parseContinuousTimes, parseCtm } from './asr/pocketsphinx-output.js';
import { transcribe } from './asr/transcribe.js';
import { wordErrorRate } from './asr/wer.js';
import { asrConformance } from './testing/asr-conformance.js';
import { describeWithMedia, media } from '../../../test/support/media.js';

const jfk = media('jfk.wav');
const call = media('two-speakers-call.wav');
/** Reference transcript from ../shared/media/README.md. */
const JFK_TEXT = 'And so my fellow Americans, ask not what your country can do for you, ask what you can do for your country.';

describe('pocketsphinx output parsing', () => {
  it('maps fillers out and strips pronunciation variants', () => {
    expect(['<s>', '</s>', '<sil>', '[NOISE]', '[SPEECH]', '++BREATH++', '<unk>'].map(cleanPocketsphinxWord)).toEqual(Array(7).fill(undefined));
    expect(cleanPocketsphinxWord('read(2)')).toBe('read');
    expect(cleanPocketsphinxWord("don't")).toBe("don't");
  });
  it('parses -time yes output into utterances', () => {
    const out = 'and not\n<s> 3.170 3.280 1.000300\nand(2) 3.290 3.730 0.985603\n<sil> 3.740 3.980 0.828680\nnot 3.990 4.300 0.817730\n</s> 4.310 4.760 1.000000\nhi\n<s> 5.0 5.1 1\nhi 5.1 5.4 0.5\n</s> 5.4 5.5 1\n';
    const u = parseContinuousTimes(out);
    expect(u.map((w) => w.map((x) => x.text))).toEqual([['and', 'not'], ['hi']]);
    expect(u[0]![0]).toEqual({ text: 'and', start: 3.29, end: 3.73, confidence: 0.985603 });
    expect(u[0]![0]!.confidence).toBeLessThanOrEqual(1);
  });
  it('parses CTM per utterance', () => {
    const m = parseCtm('u0 1 0.18 0.39 and 0.889\nu0 1 0.58 0.06 <sil> 0.8\nu1 1 0.08 0.49 not(2) 0.984\n');
    expect(m.get('u0')!.map((w) => [w.text, w.start, w.end])).toEqual([['and', 0.18, 0.57]]);
    expect(m.get('u1')![0]!.text).toBe('not');
  });
});

describeWithMedia(['jfk.wav'], 'pocketsphinx on jfk.wav', () => {
  it('transcribes by VAD regions with word times inside the file and a WER below 0.6 (measured 0.36)', async () => {
    const r = await transcribe(jfk, { locale: 'en-US', engine: 'pocketsphinx' });
    expect(r.engine).toBe('pocketsphinx');
    const words = r.segments.flatMap((s) => s.words);
    expect(words.length).toBeGreaterThan(12);
    for (const w of words) {
      expect(w.start).toBeGreaterThanOrEqual(0);
      expect(w.end).toBeLessThanOrEqual(11);
    }
    const wer = wordErrorRate(JFK_TEXT, r.segments.map((s) => s.text).join(' ')).wer;
    expect(wer).toBeLessThan(0.6);
    // "country" is recognised near the end of the speech (reference: ~10 s).
    const country = words.filter((w) => w.text === 'country').at(-1);
    expect(country?.start).toBeGreaterThan(9);
  });

  it('transcribes the whole file with pocketsphinx_continuous -time yes (measured WER 0.55)', async () => {
    const r = await transcribe(jfk, { locale: 'en-US', engine: 'pocketsphinx', pocketsphinx: { mode: 'file' } });
    const wer = wordErrorRate(JFK_TEXT, r.segments.map((s) => s.text).join(' ')).wer;
    expect(wer).toBeLessThan(0.75);
    expect(r.segments.length).toBeGreaterThan(1);
  });

});

describe('pocketsphinx utterances shared out over processes', () => {
  it('gives every utterance to one process, longest first to the least loaded, each list in time order', () => {
    const lens = [5, 1, 8, 2, 2, 7, 3];
    let t = 0;
    const regions = lens.map((l) => ({ start: (t += 1), end: (t += l) }));
    const groups = shareUtterances(regions, 3);
    expect(groups.flat().sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    for (const g of groups) expect(g).toEqual([...g].sort((a, b) => a - b));
    const loads = groups.map((g) => g.reduce((a, i) => a + lens[i]!, 0));
    // 8 | 7 | 5+3 ... then 2, 2, 1: loads 10, 9, 9 (total 28).
    expect(loads.sort((a, b) => a - b)).toEqual([9, 9, 10]);
    expect(shareUtterances(regions, 1)).toEqual([[0, 1, 2, 3, 4, 5, 6]]);
    expect(shareUtterances(regions.slice(0, 2), 4)).toHaveLength(2);
  });
});

describeWithMedia(['two-speakers-call.wav'], 'pocketsphinx over several processes on two-speakers-call.wav', () => {
  /** A batch binary that logs each run's control file, then runs pocketsphinx_batch (or fails on `failOn`). */
  function loggingBatch(dir: string, failOn?: string): string {
    const real = findExecutable('pocketsphinx_batch')!;
    const file = path.join(dir, 'batch.sh');
    writeFileSync(
      file,
      // each run logs its control file and its pid (exec keeps it), the failing one also to failed.log
      `#!/bin/sh\nctl=$2\necho "$ctl" >> ${path.join(dir, 'runs.log')}\necho $$ >> ${path.join(dir, 'pids.log')}\n${failOn ? `grep -q ' ${failOn}$' "$ctl" && { echo "$ctl" >> ${path.join(dir, 'failed.log')}; exit 3; }\n` : ''}exec ${real} "$@"\n`,
    );
    chmodSync(file, 0o755);
    return file;
  }

  it('decodes the utterances in parallel processes with the words and times of one process', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'dub-ps-test-'));
    try {
      const vad = await detectSpeech(call);
      const regions = vad.regions;
      const one = await transcribe(call, { locale: 'en-US', engine: 'pocketsphinx', speech: vad, pocketsphinx: { processes: 1 } });
      const batchBinary = loggingBatch(dir);
      const three = await transcribe(call, { locale: 'en-US', engine: 'pocketsphinx', speech: vad, pocketsphinx: { processes: 3, batchBinary } });
      const runs = readFileSync(path.join(dir, 'runs.log'), 'utf8').trim().split('\n');
      const speech = regions.reduce((a, r) => a + r.end - r.start, 0);
      // One process per 10 s of speech and per utterance, at most 3.
      expect(speech).toBeGreaterThan(20);
      expect(regions.length).toBeGreaterThan(1);
      expect(runs).toHaveLength(Math.min(3, Math.ceil(speech / 10), regions.length));
      expect(one.segments.flatMap((s) => s.words).length).toBeGreaterThan(20);
      expect(three.segments).toEqual(one.segments);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000); // two pocketsphinx passes over 30 s of speech: minutes on a loaded machine

  it('fails with the failing process and leaves no process running', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'dub-ps-test-'));
    try {
      const batchBinary = loggingBatch(dir, 'u0');
      await expect(transcribe(call, { locale: 'en-US', engine: 'pocketsphinx', pocketsphinx: { processes: 2, batchBinary } })).rejects.toThrow(/exit|code 3|status 3/i);
      // The failing process ran; the other may have been stopped before its script logged itself
      // (on a loaded machine the failure can come first). Either way none is left running.
      const runs = readFileSync(path.join(dir, 'runs.log'), 'utf8').trim().split('\n');
      expect(runs.length).toBeGreaterThanOrEqual(1);
      expect(runs.length).toBeLessThanOrEqual(2);
      expect(readFileSync(path.join(dir, 'failed.log'), 'utf8').trim().split('\n')).toHaveLength(1);
      const alive = (pid: number): boolean => {
        try {
          process.kill(pid, 0);
          return true;
        } catch {
          return false;
        }
      };
      const pids = readFileSync(path.join(dir, 'pids.log'), 'utf8').trim().split('\n').map(Number);
      expect(pids).toHaveLength(runs.length);
      expect(pids.filter(alive)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('pocketsphinx availability', () => {
  it('supports English only, and only when installed', async () => {
    const { env } = createEngineEnv({}, resolveContext().logger);
    const o = resolvePocketsphinxOptions();
    const supports = async (locale: string, pocketsphinx: typeof o) => (await ASR_ENGINES.get('pocketsphinx').supports(locale, { ...env, engines: { pocketsphinx } })).ok;
    expect(await supports('en-US', o)).toBe(true);
    expect(await supports('de-DE', o)).toBe(false);
    expect(await supports('en-US', resolvePocketsphinxOptions({ batchBinary: 'pocketsphinx-absent' }))).toBe(false);
    expect(await supports('en-US', resolvePocketsphinxOptions({ modelDir: '/nonexistent' }))).toBe(false);
  });
});

const { env } = createEngineEnv({}, resolveContext().logger);
describeWithMedia(['jfk.wav'], 'pocketsphinx conformance on jfk.wav', () => {
  asrConformance('pocketsphinx', () => createPocketsphinx(resolvePocketsphinxOptions(), env), {
    audio: () => openSpeechAudio(jfk),
    regions: async () => (await detectSpeech(jfk)).regions,
    locale: 'en-US',
    language: 'en',
    minWords: 10,
  });
});
