import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { readWav } from '@dub/media';
import { resolveContext } from '@dub/core';
import { SessionCache } from '@dub/onnx';
import { createEngineEnv } from './engine-env.js';
import { averageLinkage, cosineDistances, cutDendrogram, prepareVectors } from './speakers/cluster.js';
import { diarizationErrorRate, parseRttm } from './speakers/der.js';
import { diarize } from './speakers/diarize.js';
import { cosineSimilarity, createSpeakerEmbedder } from './speakers/similarity.js';
import { createMfccStats, resolveMfccStatsOptions } from './speakers/mfcc-stats.js';
import { createOnnxEmbedding, resolveOnnxEmbeddingOptions } from './speakers/onnx-embedding.js';
import { labelSegments } from './speakers/resegment.js';
import { speakerWindows } from './speakers/windows.js';
import { embeddingConformance } from './testing/embedding-conformance.js';
import type { AsrSegment } from './asr/types.js';
import { spreadWords } from './asr/text-words.js';
import { describeWithMedia, media } from '../../../test/support/media.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));
const call = media('two-speakers-call.wav');
const jfk = media('jfk.wav');
const sessions = new SessionCache();
afterAll(() => sessions.disposeAll());

describe('clustering', () => {
  const pts = [
    [1, 0.1],
    [1, 0],
    [0.9, 0.2],
    [0, 1],
    [0.1, 1],
    [-1, 0.05],
  ].map((p) => Float32Array.from(p));
  const units = prepareVectors(pts, false);
  const merges = averageLinkage(cosineDistances(units), units.length);
  it('merges in non-decreasing distance (average linkage)', () => {
    expect(merges.length).toBe(5);
    for (let i = 1; i < merges.length; i++) expect(merges[i]!.distance).toBeGreaterThanOrEqual(merges[i - 1]!.distance - 1e-12);
  });
  it('cuts at exactly k or at a threshold', () => {
    expect(Array.from(cutDendrogram(6, merges, { k: 3 }))).toEqual([0, 0, 0, 1, 1, 2]);
    expect(Array.from(cutDendrogram(6, merges, { k: 1 }))).toEqual([0, 0, 0, 0, 0, 0]);
    expect(Array.from(cutDendrogram(6, merges, { threshold: 0.1 }))).toEqual([0, 0, 0, 1, 1, 2]);
    expect(Array.from(cutDendrogram(6, merges, { k: 6 }))).toEqual([0, 1, 2, 3, 4, 5]);
  });
});

describe('windows and re-segmentation', () => {
  it('lays windows over speech time so a window never reads a pause', () => {
    const w = speakerWindows([{ start: 0, end: 1, probability: 1 }, { start: 2, end: 3.2, probability: 1 }], 1.5, 0.75, 0.5);
    expect(w.length).toBe(2);
    expect(w[0]!.pieces).toEqual([{ start: 0, end: 1 }, { start: 2, end: 2.5 }]);
    expect(w[1]!.pieces[w[1]!.pieces.length - 1]!.end).toBeCloseTo(3.2, 6);
    expect(speakerWindows([{ start: 0, end: 0.3, probability: 1 }], 1.5, 0.75, 0.5)).toEqual([]);
  });
  it('splits a segment where the speaker changes between words', () => {
    const seg: AsrSegment = {
      start: 0,
      end: 4,
      text: 'one two three four',
      words: ['one', 'two', 'three', 'four'].map((t, i) => ({ text: t, start: i, end: i + 0.9, confidence: 1 })),
    };
    const out = labelSegments([seg], [{ start: 0, end: 2, speaker: 0 }, { start: 2, end: 4, speaker: 1 }], ['A', 'B']);
    expect(out.map((s) => [s.speaker, s.text, s.start, s.end])).toEqual([
      ['A', 'one two', 0, 1.9],
      ['B', 'three four', 2, 3.9],
    ]);
  });
});

describeWithMedia(['two-speakers-call.wav', 'two-speakers-call.rttm', 'two-speakers-call.stm', 'jfk.wav'], 'diarize on real recordings', () => {
  it('estimates 2 speakers in two-speakers-call.wav and matches the reference turns', async () => {
    const d = await diarize(call, { referenceClips: false, sessions });
    expect(d.count).toBe('estimated');
    expect(d.speakers.length).toBe(2);
    const ref = parseRttm(await readFile(media('two-speakers-call.rttm'), 'utf8'));
    const der = diarizationErrorRate(ref, d.turns, 0.25);
    expect(der.der).toBeLessThan(0.15); // measured 0.03 with a 0.25 s collar
  });

  it('fits line spans to the speech by default; lines.fitSpans false keeps authored times (a source SRT)', async () => {
    // Whisper-like lines of jfk.wav that run to the next line's start (the speech stops well before 3.184)
    const seg = (start: number, end: number, text: string): AsrSegment => ({ start, end, text, words: [{ text, start, end, confidence: 1 }] });
    const segments = [seg(0, 3.184, 'And so, my fellow Americans,'), seg(3.184, 7.82, 'ask not what your country can do for you,'), seg(7.82, 11, 'ask what you can do for your country.')];
    const fitted = await diarize(jfk, { referenceClips: false, sessions, segments, speakersCount: 1 });
    expect(fitted.segments[0]!.end).toBeLessThan(3.184 - 0.3);
    expect(fitted.segments[1]!.start - fitted.segments[0]!.end).toBeGreaterThan(0.3);
    const kept = await diarize(jfk, { referenceClips: false, sessions, segments, speakersCount: 1, lines: { fitSpans: false } });
    expect(kept.segments.map((s) => [s.start, s.end])).toEqual([
      [0, 3.184],
      [3.184, 7.82],
      [7.82, 11],
    ]);
  });

  it('estimates 1 speaker in jfk.wav', async () => {
    const d = await diarize(jfk, { referenceClips: false, sessions });
    expect(d.speakers.map((s) => s.id)).toEqual(['speaker_1']);
    expect(d.speakers[0]!.speechSeconds).toBeGreaterThan(7);
  });

  it('records every cluster folded into another speaker, with its share and the reason (never silently)', async () => {
    // A tight threshold splits the call into many clusters; those under 10% of the windows are folded.
    const d = await diarize(call, { estimate: 'threshold', threshold: 0.2, referenceClips: false, sessions });
    expect(d.method).toBe('threshold');
    const folded = d.adjustments.filter((a) => a.kind === 'folded');
    expect(folded.length).toBeGreaterThan(0);
    const ids = d.speakers.map((sp) => sp.id);
    for (const a of folded) {
      expect(ids).toContain(a.into);
      expect(a.windows).toBeGreaterThan(0);
      expect(a.share).toBeLessThan(0.1);
      expect(a.reason).toMatch(/^a cluster with [\d.]+% of the speech windows, under the 10% minimum share of a speaker \(minSpeakerShare\), was folded into the nearest speaker$/);
    }
    // with no minimum share nothing is folded
    const kept = await diarize(call, { estimate: 'threshold', threshold: 0.2, minSpeakerShare: 0, referenceClips: false, sessions });
    expect(kept.adjustments.filter((a) => a.kind === 'folded')).toEqual([]);
    expect(kept.speakers.length).toBeGreaterThan(d.speakers.length);
    // the default (BIC) says how it counted; a given count folds nothing
    const bic = await diarize(call, { referenceClips: false, sessions });
    expect(bic.method).toBe('bic');
    for (const a of bic.adjustments) expect(bic.speakers.map((sp) => sp.id)).toContain(a.into);
    const fixed = await diarize(call, { speakersCount: 2, referenceClips: false, sessions });
    expect(fixed).toMatchObject({ method: 'speakers_count', adjustments: [] });
  });

  it('clusters to exactly speakers_count', async () => {
    for (const k of [1, 2, 3]) {
      const d = await diarize(call, { speakersCount: k, referenceClips: false, sessions });
      expect(d.count).toBe('fixed');
      expect(d.speakers.length).toBe(k);
      expect(new Set(d.turns.map((t) => t.speaker)).size).toBe(k);
    }
  });

  it('labels transcript segments and splits them at speaker changes', async () => {
    // One segment spanning the whole call, words from the reference transcript (.stm) at their times.
    const stm = (await readFile(media('two-speakers-call.stm'), 'utf8')).trim().split('\n').map((l) => l.split(' '));
    const words = stm.flatMap((f) => spreadWords(f.slice(5), Number(f[3]), Number(f[4])));
    const d = await diarize(call, { referenceClips: false, sessions, segments: [{ start: 6.68, end: 30, text: words.map((w) => w.text).join(' '), words }] });
    expect(d.segments.length).toBeGreaterThanOrEqual(4);
    const truthAt = (t: number) => stm.find((f) => t >= Number(f[3]) - 1e-6 && t <= Number(f[4]) + 1e-6)![2]!;
    // Map our labels to the reference names by majority and count agreeing utterances.
    const pairs = d.segments.flatMap((s) => s.words.map((w) => [s.speaker!, truthAt(w.start)] as const));
    const votes = new Map<string, Map<string, number>>();
    for (const [ours, theirs] of pairs) votes.set(ours, new Map([...(votes.get(ours) ?? new Map<string, number>())]).set(theirs, (votes.get(ours)?.get(theirs) ?? 0) + 1));
    const mapped = new Map([...votes].map(([ours, v]) => [ours, [...v].sort((a, b) => b[1] - a[1])[0]![0]]));
    const agree = pairs.filter(([ours, theirs]) => mapped.get(ours) === theirs).length;
    expect(agree / pairs.length).toBeGreaterThanOrEqual(0.8);
  });

  it('writes a reference clip of 6-20 s per speaker from its longest, most confident speech', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'asr-clips-'));
    try {
      const d = await diarize(call, { speakersCount: 2, referenceClips: { dir }, sessions });
      for (const s of d.speakers) {
        const ref = s.reference!;
        expect(ref.duration).toBeGreaterThanOrEqual(6);
        expect(ref.duration).toBeLessThanOrEqual(20);
        const turns = d.turns.filter((t) => t.speaker === s.id);
        for (const p of ref.pieces) expect(turns.some((t) => p.start >= t.start - 1e-6 && p.end <= t.end + 1e-6)).toBe(true);
        const wav = await readWav(ref.file!);
        expect(wav.sampleRate).toBe(16000);
        expect(wav.channels[0]!.length / 16000).toBeGreaterThanOrEqual(6);
        expect(ref.samples).toBeUndefined();
      }
      // jfk has 8 s of speech: the clip takes what there is.
      const one = await diarize(jfk, { sessions });
      expect(one.speakers[0]!.reference!.samples!.length / 16000).toBeGreaterThan(6);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('runs the ONNX embedding engine (tiny WeSpeaker-shaped model) end to end', async () => {
    const d = await diarize(call, {
      embedding: 'onnx',
      onnx: { model: 'speaker-embedding-tiny-test', fileName: 'embedding.onnx' },
      models: { searchDirs: [FIXTURES] },
      speakersCount: 2,
      referenceClips: false,
      sessions,
    });
    expect(d.engine).toBe('onnx');
    expect(d.speakers.length).toBe(2);
  });

  it('speaker similarity: one vector per clip, cosine; MFCC statistics marked and without a threshold, WeSpeaker-shaped with 1 - the clustering distance', async () => {
    const mfcc = await createSpeakerEmbedder({ sessions });
    expect([mfcc.engine, mfcc.kind, mfcc.threshold]).toEqual(['mfcc', 'mfcc_stats_cosine', null]);
    const audio = await readWav(call);
    const sr = audio.sampleRate;
    const x = audio.channels[0]!;
    const a = await mfcc.embed({ samples: x.slice(0, 5 * sr), sampleRate: sr });
    expect(a).toHaveLength(40);
    expect(cosineSimilarity(a, a)).toBeCloseTo(1, 6);
    expect(cosineSimilarity(a, await mfcc.embed({ samples: x.slice(0, 5 * sr), sampleRate: sr }))).toBeCloseTo(1, 6);
    expect(cosineSimilarity(a, new Float32Array(40))).toBe(0);
    expect(() => cosineSimilarity(a, new Float32Array(3))).toThrow(RangeError);
    await mfcc.close();
    const onnx = await createSpeakerEmbedder({ embedding: 'onnx', onnx: { model: 'speaker-embedding-tiny-test', fileName: 'embedding.onnx' }, models: { searchDirs: [FIXTURES] }, sessions });
    expect([onnx.engine, onnx.kind, onnx.threshold]).toEqual(['onnx', 'speaker_embedding_cosine', 0.4]);
    const e = await onnx.embed({ samples: x.slice(0, 3 * sr), sampleRate: sr });
    expect(Math.abs(cosineSimilarity(e, await onnx.embed({ samples: x.slice(10 * sr, 13 * sr), sampleRate: sr })))).toBeLessThanOrEqual(1);
    await onnx.close();
  });

  it('finds no speakers where there is no speech', async () => {
    const d = await diarize({ samples: new Float32Array(16000 * 2), sampleRate: 16000 }, { sessions });
    expect(d.speakers).toEqual([]);
    expect(d.turns).toEqual([]);
  });
});

describe('diarizationErrorRate', () => {
  it('is 0 for a perfect relabelled hypothesis and counts confusion, misses and false alarms', () => {
    const ref = [{ start: 0, end: 2, speaker: 'a' }, { start: 2, end: 4, speaker: 'b' }];
    expect(diarizationErrorRate(ref, [{ start: 0, end: 2, speaker: 'x' }, { start: 2, end: 4, speaker: 'y' }], 0).der).toBe(0);
    const r = diarizationErrorRate(ref, [{ start: 0, end: 3, speaker: 'x' }], 0);
    expect(r.confusion).toBeCloseTo(1, 6);
    expect(r.missed).toBeCloseTo(1, 6);
    expect(r.der).toBeCloseTo(0.5, 6);
    expect(diarizationErrorRate(ref, [{ start: 0, end: 3, speaker: 'x' }], 0.25).total).toBeCloseTo(3, 6);
  });
});

const voices = async (): Promise<[Float32Array, Float32Array]> => {
  const x = (await readWav(call)).channels[0]!;
  const sec = (a: number, b: number) => x.slice(Math.round(a * 16000), Math.round(b * 16000));
  return [sec(10.6, 13.6), sec(14.6, 17.6)]; // Diane, then Sheila (reference .rttm)
};
const { env } = createEngineEnv({ sessions, models: { searchDirs: [FIXTURES] } }, resolveContext().logger);
describeWithMedia(['two-speakers-call.wav'], 'speaker embedding conformance on two real voices', () => {
  embeddingConformance('mfcc', () => createMfccStats(resolveMfccStatsOptions(), env), { voices });
  embeddingConformance('onnx (tiny test model)', () => createOnnxEmbedding(resolveOnnxEmbeddingOptions({ model: 'speaker-embedding-tiny-test', fileName: 'embedding.onnx' }), env), { voices });
});
