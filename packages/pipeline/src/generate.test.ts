/**
 * generate-version end to end on real inputs made here: a 5.5 s test video whose audio is two
 * English lines spoken by espeak-ng (a low male and a high female voice) over pink noise, its
 * transcript with the two speakers' reference clips, a hand-written Spanish script, and a
 * background track stored as prepare-asset's separation output.
 */
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { blobKeys, FsBlobStore, loadConfig, silentLogger, type EmittedEvent, type GenerateVersionJob, type JobRuntime, type QualityReport, type Transcript, type VersionScript } from '@dub/core';
import { SessionCache } from '@dub/onnx';
import { probe, readWav, renderTimelineBuffer, resample, runFfmpeg, runProcess, writeWav } from '@dub/media';
import { detectStretchers, medianPitch, semitones, speechExtent, TTS_ENGINES } from '@dub/voice';
import { ArtifactCache } from './artifacts.js';
import { generateVersion, type GenerateVersionOptions } from './generate.js';
import { createJobHandlers } from './handlers.js';
import { previewSpeakerVoice, redubSegment } from './redub.js';
import { engineChoiceFromEnv, generateOptionsOf } from './engine-choice.js';
import { linesAtOnce, stretchRecord, withTextStepNote } from './generate-synthesis.js';

const ASSET = 'ast_generatetest';
const VERSION = 'ver_generatetest';
const DURATION = 5.5;
const LINES = [
  { start: 0.4, speaker: 'S1', voice: 'en-us+m1', pitch: '20', en: 'Hello everyone, welcome to the show.', es: 'Hola a todos, bienvenidos al programa.' },
  { start: 3.0, speaker: 'S2', voice: 'en-us+f2', pitch: '70', en: 'Thank you, it is great to be here.', es: 'Gracias, es un placer estar aquí.' },
];

let dir: string;
let store: FsBlobStore;
let sourceFile: string;
let segEnds: number[];

async function espeak(voice: string, pitch: string, text: string, file: string): Promise<void> {
  await runProcess('espeak-ng', ['-v', voice, '-p', pitch, '-z', '-w', file, '--stdin'], { input: text });
}

function runtime(events: EmittedEvent[]): JobRuntime {
  return {
    store,
    ctx: { logger: silentLogger, onProgress: () => undefined },
    config: loadConfig({ DUB_TMP_DIR: path.join(dir, 'tmp') }),
    sessions: new SessionCache(),
    emit: async (e) => void events.push(e),
    enqueue: async () => undefined,
    attempt: 1,
  };
}

/** This file is about generation with espeak-ng's matched voices (pitch, rate, timbre): it chooses it explicitly (auto speaks Spanish with Kokoro, test/kokoro-*.test.ts, packages/voice/src/kokoro.test.ts). */
const ESPEAK: GenerateVersionOptions = { tts: { engine: 'espeak-ng' } };

function job(generation: number, options: GenerateVersionJob['options'] = {}, mode: GenerateVersionJob['mode'] = 'no_lips'): GenerateVersionJob {
  return { v: 1, type: 'generate-version', job_id: `job-${generation}`, asset_id: ASSET, version_id: VERSION, locale: 'es-ES', mode, script_key: blobKeys.script(VERSION), generation, options };
}

async function wav16k(file: string, name: string): Promise<Float32Array> {
  const out = path.join(dir, `${name}.wav`);
  await resample(file, out, { sampleRate: 16000, channels: 1, format: 'float32' });
  return (await readWav(out)).channels[0]!;
}
function rmsDb(x: Float32Array, sr: number, from: number, to: number): number {
  let e = 0;
  const a = Math.round(from * sr);
  const b = Math.round(to * sr);
  for (let i = a; i < b; i++) e += x[i]! * x[i]!;
  return 10 * Math.log10(e / (b - a) + 1e-20);
}
/** Normalised correlation of two 16 kHz signals over [from, to) seconds at lag 0. */
function correlation(a: Float32Array, b: Float32Array, from: number, to: number): number {
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = Math.round(from * 16000); i < Math.min(a.length, b.length, Math.round(to * 16000)); i++) {
    ab += a[i]! * b[i]!;
    aa += a[i]! * a[i]!;
    bb += b[i]! * b[i]!;
  }
  return ab / Math.sqrt(aa * bb + 1e-20);
}
const window = (x: Float32Array, sr: number, from: number, to: number): Float32Array => x.subarray(Math.round(from * sr), Math.round(to * sr));

beforeAll(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'generate-test-'));
  await fsp.mkdir(path.join(dir, 'tmp'));
  store = new FsBlobStore(path.join(dir, 'store'));

  // English source lines and the source video (testsrc + speech over pink noise).
  const clips = [];
  for (const [i, l] of LINES.entries()) {
    const f = path.join(dir, `line-${i}.wav`);
    await espeak(l.voice, l.pitch, l.en, f);
    clips.push({ file: f, audio: await readWav(f) });
  }
  const sr = clips[0]!.audio.sampleRate;
  segEnds = LINES.map((l, i) => l.start + clips[i]!.audio.channels[0]!.length / sr);
  const speech = renderTimelineBuffer({ sampleRate: sr, channels: 1, frames: Math.round(DURATION * sr) }, LINES.map((l, i) => ({ atFrame: Math.round(l.start * sr), audio: clips[i]!.audio.channels })));
  const speechFile = path.join(dir, 'speech.wav');
  await writeWav(speechFile, { sampleRate: sr, channels: speech });
  sourceFile = path.join(dir, 'source.mp4');
  await runFfmpeg([
    '-f', 'lavfi', '-i', `testsrc=size=320x240:rate=25:duration=${DURATION}`,
    '-i', speechFile,
    '-f', 'lavfi', '-i', `anoisesrc=d=${DURATION}:c=pink:a=0.01:r=44100`,
    '-filter_complex', '[1:a]aresample=44100[s];[s][2:a]amix=inputs=2:duration=longest:normalize=0[a]',
    '-map', '0:v', '-map', '[a]', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-ac', '2', '-t', String(DURATION), sourceFile,
  ]);
  await store.putFile(blobKeys.sourceVideo(ASSET), sourceFile);

  // Transcript with the speakers' reference clips (as prepare-asset stores them).
  const refKeys = await Promise.all(clips.map(async (c, i) => {
    const key = blobKeys.artifact(ASSET, 'speakers', 'test', `reference-${LINES[i]!.speaker}.wav`);
    await store.putFile(key, c.file);
    return key;
  }));
  const transcript: Transcript = {
    v: 1, locale: 'en-US', engine: 'test', duration: DURATION,
    speakers: LINES.map((l, i) => ({ id: l.speaker, reference_key: refKeys[i]!, speech_seconds: segEnds[i]! - l.start })),
    segments: LINES.map((l, i) => ({ id: `seg-000${i + 1}`, start: l.start, end: Number(segEnds[i]!.toFixed(3)), speaker: l.speaker, text: l.en, words: [] })),
  };
  await store.put(blobKeys.transcript(ASSET), JSON.stringify(transcript));
  const script: VersionScript = {
    v: 1, asset_id: ASSET, version_id: VERSION, source_locale: 'en-US', target_locale: 'es-ES', translation_engine: 'test',
    speakers: transcript.speakers,
    segments: transcript.segments.map((s, i) => ({ id: s.id, start: s.start, end: s.end, speaker: s.speaker, source_text: s.text, target_text: LINES[i]!.es })),
    updated_at: new Date().toISOString(),
  };
  await store.put(blobKeys.script(VERSION), JSON.stringify(script));

  // The background as prepare-asset's separation stage stores it.
  const cache = new ArtifactCache(store, ASSET, { tmpDir: dir });
  const separated = await cache.run('separation', { mix: 'test-mix' }, { logger: silentLogger }, async (out) => {
    const bg = path.join(out.dir, 'background.wav');
    await runFfmpeg(['-f', 'lavfi', '-i', `anoisesrc=d=${DURATION}:c=pink:a=0.01:r=44100`, '-ac', '2', bg]);
    out.addFile('background.wav', bg);
    out.addFile('speech.wav', speechFile);
    return { engine: 'test' };
  });
  await store.put(blobKeys.transcript(ASSET), JSON.stringify({ ...transcript, tracks: { speech: separated.files['speech.wav']!, background: separated.files['background.wav']! } }));
});

afterAll(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

type Generated = Extract<EmittedEvent, { type: 'version_generated' }>;
const generated = (events: EmittedEvent[]): Generated => {
  const e = events.find((x): x is Generated => x.type === 'version_generated');
  if (!e) throw new Error('no version_generated event');
  return e;
};
/** Median F0 of each dubbed line in the speech timeline. */
async function lineF0s(e: Generated): Promise<number[]> {
  const tl = await readWav(store.localPath(e.speech_key!)!);
  const x = tl.channels[0]!;
  return LINES.map((l, i) => medianPitch(window(x, tl.sampleRate, l.start, (LINES[i + 1]?.start ?? DURATION)), tl.sampleRate));
}

/** Each line of a generation's quality report with its `regenerated` flag. */
const regeneratedLines = async (g: number) =>
  (JSON.parse((await store.getBuffer(blobKeys.qualityReport(VERSION, g))).toString()) as { segments: { id: string; regenerated: boolean }[] }).segments.map((x) => [x.id, x.regenerated]);

describe('generateVersion', () => {
  let first: Generated;

  it('dubs the video: copied video stream, speech where the segments are, same duration', async () => {
    const events: EmittedEvent[] = [];
    const result = await generateVersion(job(1), runtime(events), ESPEAK);
    first = generated(events);
    // the first generation made every line anew (the report says so per line)
    expect(await regeneratedLines(1)).toEqual([['seg-0001', true], ['seg-0002', true]]);
    expect(first.result_video_key).toBe(blobKeys.resultVideo(VERSION, 1));
    expect(first.result_audio_key).toBe(blobKeys.resultAudio(VERSION, 1));
    expect(first.duration).toBeCloseTo(DURATION, 1);
    // at its speaker's pace (espeak-ng's Spanish is faster than the English source) a line may run into the silence after its slot, never forced
    expect(result.report.segments.map((x) => x.resolution).every((r) => r === 'fits' || r === 'used_gap_after')).toBe(true);
    expect(result.overlongSegments).toEqual(result.report.segments.filter((x) => x.resolution === 'used_gap_after').map((x) => x.id));

    const src = await probe(sourceFile);
    const out = await probe(store.localPath(first.result_video_key)!);
    expect(out.video?.codec).toBe(src.video?.codec);
    expect([out.video?.width, out.video?.height]).toEqual([src.video?.width, src.video?.height]);
    expect(out.video?.frames).toBe(src.video?.frames);
    expect(out.audio).toHaveLength(1);
    expect(out.audio[0]!.codec).toBe('aac');
    expect(out.audio[0]!.language).toBe('spa');
    expect(Math.abs(out.duration - src.duration)).toBeLessThan(0.05);
    const m4a = await probe(store.localPath(first.result_audio_key)!);
    expect(m4a.audio[0]!.codec).toBe('aac');
    expect(Math.abs(m4a.duration - DURATION)).toBeLessThan(0.05);

    // energy: inside the lines far above the lead-in (background only)
    const x = await wav16k(store.localPath(first.result_video_key)!, 'result-1');
    const lead = rmsDb(x, 16000, 0, 0.35);
    for (const [i, l] of LINES.entries()) expect(rmsDb(x, 16000, l.start + 0.2, segEnds[i]! - 0.2) - lead).toBeGreaterThan(15);

    // the dubbed lines start at their segments' exact positions in the speech timeline (looked for from 0.3 s before, or from where the line before ends: by turns it may take the silence up to this one)
    const tl = await readWav(store.localPath(first.speech_key!)!);
    for (const [i, l] of LINES.entries()) {
      const from = Math.max(l.start - 0.3, i > 0 ? result.report.segments[i - 1]!.placed.end : 0);
      const ext = speechExtent(window(tl.channels[0]!, tl.sampleRate, from, l.start + 1), tl.sampleRate);
      expect(Math.abs(from + ext.start / tl.sampleRate - l.start)).toBeLessThan(0.03);
    }
    // each speaker keeps their voice: the low male line stays low, the high female line high
    const [f1, f2] = await lineF0s(first);
    expect(f1!).toBeLessThan(140);
    expect(f2!).toBeGreaterThan(180);

    // target word timings were written into the script, inside the segments' slots
    const script = JSON.parse((await store.getBuffer(blobKeys.script(VERSION))).toString()) as VersionScript;
    for (const s of script.segments) {
      expect(s.target_words!.map((w) => w.text).join(' ')).toBe(s.target_text);
      expect(s.target_words![0]!.start).toBeGreaterThanOrEqual(s.start);
    }
  });

  it('a second run on the same store reuses every stage', async () => {
    const events: EmittedEvent[] = [];
    await generateVersion(job(1), runtime(events), ESPEAK);
    const done = events.filter((e): e is Extract<EmittedEvent, { type: 'stage_done' }> => e.type === 'stage_done');
    const stages = done.filter((e) => e.stage !== 'publish');
    expect(stages.map((e) => e.stage)).toEqual(expect.arrayContaining(['source', 'voices', 'synthesis', 'timeline', 'background', 'mix', 'audio', 'video']));
    for (const e of stages) expect({ stage: e.stage, cached: e.cached }).toEqual({ stage: e.stage, cached: true });
    expect(generated(events).result_video_key).toBe(first.result_video_key);
  });

  it('an edited line re-synthesizes only that line', async () => {
    const manifests = async () => (await store.list(`assets/${ASSET}/artifacts/synthesis-`)).filter((k) => k.endsWith('manifest.json')).length;
    const before = await manifests();
    const script = JSON.parse((await store.getBuffer(blobKeys.script(VERSION))).toString()) as VersionScript;
    script.segments[1]!.target_text = 'Muchas gracias, me alegro de estar aquí.';
    await store.put(blobKeys.script(VERSION), JSON.stringify(script));
    const events: EmittedEvent[] = [];
    await generateVersion(job(2), runtime(events), ESPEAK);
    expect(await manifests()).toBe(before + 1);
    expect(generated(events).result_video_key).toBe(blobKeys.resultVideo(VERSION, 2));
    expect(await store.has(blobKeys.resultVideo(VERSION, 1))).toBe(true);
    // the report says which lines this generation made anew: only the edited one
    expect(await regeneratedLines(2)).toEqual([['seg-0001', false], ['seg-0002', true]]);
  });

  it('redubSegment re-synthesizes one edited line as generation would; the next generation takes it from the cache and re-synthesizes nothing', async () => {
    const synthesisManifests = async () => (await store.list(`assets/${ASSET}/artifacts/synthesis-`)).filter((k) => k.endsWith('manifest.json')).length;
    const saved = (await store.getBuffer(blobKeys.script(VERSION))).toString();
    const opts = generateOptionsOf(engineChoiceFromEnv({ DUB_TTS_ENGINE: 'espeak-ng' }));
    const decode = (b: Buffer) => readWav(new Uint8Array(b));
    try {
      // the saved text, already generated: nothing is synthesized, the line comes from the cache
      const same = await redubSegment(job(9), runtime([]), opts, { segmentId: 'seg-0001' });
      expect(same).toMatchObject({ segment_id: 'seg-0001', speaker: 'S1', regenerated: false, others_synthesized: 0, tts_engine: 'espeak-ng', voice_source: 'matched' });
      const old = await decode(same.wav);
      expect(old.sampleRate).toBe(same.sample_rate);
      expect(old.channels[0]!.length / old.sampleRate).toBeCloseTo(same.duration_seconds, 3);
      // an edited text (not saved): synthesized now, only this line, placed at its segment
      const manifests = await synthesisManifests();
      const text = 'Hola a todos.';
      const edited = await redubSegment(job(9), runtime([]), opts, { segmentId: 'seg-0001', text });
      expect(edited).toMatchObject({ segment_id: 'seg-0001', text, regenerated: true, others_synthesized: 0, resolution: 'fits' });
      expect(await synthesisManifests()).toBe(manifests + 1);
      expect(edited.start).toBeCloseTo(LINES[0]!.start, 3);
      const audio = await decode(edited.wav);
      const speech = speechExtent(audio.channels[0]!, audio.sampleRate);
      const oldSpeech = speechExtent(old.channels[0]!, old.sampleRate);
      // the shorter text is shorter speech (both at speed 1: each fits its slot)
      expect((speech.end - speech.start) / audio.sampleRate).toBeLessThan((0.8 * (oldSpeech.end - oldSpeech.start)) / old.sampleRate);
      expect(edited.artifact_key).not.toBe(same.artifact_key);
      // the re-dub did not save anything
      expect((await store.getBuffer(blobKeys.script(VERSION))).toString()).toBe(saved);

      // the edit saved, then generated: every line comes from the cache, the edited one from the re-dub
      const script = JSON.parse(saved) as VersionScript;
      script.segments[0]!.target_text = text;
      await store.put(blobKeys.script(VERSION), JSON.stringify(script));
      const again = await redubSegment(job(9), runtime([]), opts, { segmentId: 'seg-0001' });
      expect(again).toMatchObject({ regenerated: false, artifact_key: edited.artifact_key });
      const before = await synthesisManifests();
      await generateVersion(job(9), runtime([]), ESPEAK);
      expect(await synthesisManifests()).toBe(before);
      expect(await regeneratedLines(9)).toEqual([['seg-0001', false], ['seg-0002', false]]);
      const report = JSON.parse((await store.getBuffer(blobKeys.qualityReport(VERSION, 9))).toString()) as { segments: { id: string; spoken_text: string }[] };
      expect(report.segments[0]!.spoken_text).toBe(text);

      // bad requests
      await expect(redubSegment(job(9), runtime([]), opts, { segmentId: 'seg-9999' })).rejects.toMatchObject({ status: 404 });
      await expect(redubSegment(job(9), runtime([]), opts, { segmentId: 'seg-0001', text: '  ' })).rejects.toMatchObject({ status: 400 });
      await expect(redubSegment(job(9), runtime([]), opts, { segmentId: 'seg-0001', speaker: 'S9' })).rejects.toMatchObject({ status: 400 });
    } finally {
      await store.put(blobKeys.script(VERSION), saved);
    }
  });

  it('an edited line re-encodes only the AAC chunks whose mix samples changed; the video keeps the audio aligned and its duration', async () => {
    const CHUNK = 8 * 1024;
    const MARGIN = 8 * 1024;
    const opts = { ...ESPEAK, audio: { chunkFrames: CHUNK, wholeEncodeFraction: 1 } };
    // the stage's own manifests (`mix-<hash>`), not another stage's whose name starts alike (`mix-background-<hash>`)
    const manifests = async (stage: string) => (await store.list(`assets/${ASSET}/artifacts/${stage}-`)).filter((k) => new RegExp(`/${stage}-[0-9a-f]{20}/manifest\\.json$`).test(k));
    /** The manifest `stage` wrote during `run` (the stage ran, not from the cache). */
    const ranDuring = async <T>(stage: string, run: () => Promise<unknown>): Promise<{ value: T; files: Record<string, string> }> => {
      const before = new Set(await manifests(stage));
      await run();
      const added = (await manifests(stage)).filter((k) => !before.has(k));
      expect(added).toHaveLength(1);
      return JSON.parse((await store.getBuffer(added[0]!)).toString()) as { value: T; files: Record<string, string> };
    };
    type AudioValue = { chunks: { total: number; encoded: number; reused: number }; encode: string; identities: { frames: number; hashes: string[] }; hashesReused: number };
    /** The AAC chunk blobs of the asset, by their hash. */
    const chunkBlobs = async () => new Set((await store.list(`assets/${ASSET}/artifacts/audio-chunk-`)).map((k) => /audio-chunk-([0-9a-f]+)\//.exec(k)![1]!));
    const saved = (await store.getBuffer(blobKeys.script(VERSION))).toString();
    const setText = async (i: number, text: string) => {
      const script = JSON.parse((await store.getBuffer(blobKeys.script(VERSION))).toString()) as VersionScript;
      script.segments[i]!.target_text = text;
      await store.put(blobKeys.script(VERSION), JSON.stringify(script));
    };
    try {
      await setText(1, 'Gracias a todos, es un gusto.');
      let events: EmittedEvent[] = [];
      let mix1 = '';
      const a1 = await ranDuring<AudioValue>('audio', async () => {
        mix1 = (await ranDuring('mix', () => generateVersion(job(20), runtime(events), opts))).files['mix.wav']!;
      });
      const total = a1.value.chunks.total;
      // the first generation hashes every chunk (no earlier identities to reuse)
      expect(a1.value).toMatchObject({ chunks: { total, encoded: total, reused: 0 }, encode: 'whole', hashesReused: 0 });
      expect(a1.value.identities.hashes).toHaveLength(total);

      // a small edit (one word): the exact loudness gain stays within tolerance of generation 20's, which is kept
      await setText(0, 'Hola a todos, bienvenidas al programa.');
      events = [];
      const blobsBefore = await chunkBlobs();
      let mix2 = '';
      const a2 = await ranDuring<AudioValue>('audio', async () => {
        mix2 = (await ranDuring('mix', () => generateVersion(job(21), runtime(events), opts))).files['mix.wav']!;
      });
      // The chunks whose samples (with their margins) differ between the two mixes.
      const x1 = await readWav(store.localPath(mix1)!);
      const x2 = await readWav(store.localPath(mix2)!);
      const frames = x2.channels[0]!.length;
      expect(x1.channels[0]!.length).toBe(frames);
      const changed: number[] = [];
      for (let c = 0; c < total; c++) {
        const from = Math.max(0, c * CHUNK - MARGIN);
        const to = Math.min(frames, (c + 1) * CHUNK + MARGIN);
        if (x1.channels.some((ch, k) => ch.subarray(from, to).some((v, i) => v !== x2.channels[k]![from + i]))) changed.push(c);
      }
      expect(a2.value.chunks).toEqual({ total, encoded: changed.length, reused: total - changed.length });
      // Generation 21's re-dub state supersedes 20's: the chunk blobs left are exactly 21's, the ones
      // only generation 20's track was made of are collected (redub-state.ts).
      for (const h of a1.value.identities.hashes) expect(blobsBefore.has(h)).toBe(true);
      expect(await chunkBlobs()).toEqual(new Set(a2.value.identities.hashes));
      // The mix outside the edited line is sample-identical (the gain of generation 20 kept, the
      // limiter local): the re-dub encodes only the chunks around line 1.
      const normalization = (JSON.parse((await store.getBuffer(blobKeys.qualityReport(VERSION, 21))).toString()) as QualityReport).loudness.normalization;
      expect(normalization).toMatchObject({ kept_from_generation: 20 });
      expect(changed.length).toBeGreaterThan(0);
      expect(changed.length).toBeLessThan(total * 0.75);
      expect(changed[changed.length - 1]!).toBeLessThan(Math.ceil((LINES[1]!.start * 48000) / CHUNK));
      expect(a2.value.encode).toBe('windows');
      console.log(`audio chunks re-encoded after editing line 1: ${changed.length} of ${total}`);
      // Another audio stage key on the same mix: every chunk comes from the blob store.
      const a3 = await ranDuring<AudioValue>('audio', () => generateVersion(job(22), runtime([]), { ...ESPEAK, audio: { ...opts.audio, wholeEncodeFraction: 0.99 } }));
      expect(a3.value).toMatchObject({ chunks: { total, encoded: 0, reused: total }, encode: 'none', hashesReused: 0 });
      // the same mix: the same chunk identities as generation 21's audio
      expect(a3.value.identities).toEqual(a2.value.identities);

      // The muxed video: the spliced track is copied, starts at 0 and lasts the video's duration.
      const g = generated(events);
      const video = await probe(store.localPath(g.result_video_key)!);
      expect(video.audio[0]!.codec).toBe('aac');
      expect(Math.abs(video.duration - DURATION)).toBeLessThan(0.05);
      const report = JSON.parse((await store.getBuffer(blobKeys.qualityReport(VERSION, 21))).toString()) as { durations: { diff_ms: Record<string, number | null> } };
      console.log(JSON.stringify(report.durations));
      for (const [k, v] of Object.entries(report.durations.diff_ms)) expect({ k, v: Math.abs(v!) < 30 }).toEqual({ k, v: true });
      // The video's audio decodes to the mix, aligned to the sample (lag 0 of the best correlation).
      const dec = path.join(dir, 'video-audio.wav');
      await runFfmpeg(['-i', store.localPath(g.result_video_key)!, '-map', '0:a:0', '-c:a', 'pcm_f32le', dec]);
      const y = (await readWav(dec)).channels[0]!;
      const ref = x2.channels[0]!;
      let best = 0;
      let bestV = -Infinity;
      for (let lag = -1500; lag <= 1500; lag++) {
        let v = 0;
        for (let i = 48000; i < 48000 + 96000; i++) v += (y[i + lag] ?? 0) * ref[i]!;
        if (v > bestV) [best, bestV] = [lag, v];
      }
      expect(best).toBe(0);
    } finally {
      await store.put(blobKeys.script(VERSION), saved);
    }
  });

  it('previewSpeakerVoice speaks a line with the voice a choice gives the speaker, planned as generation plans it', async () => {
    const opts = generateOptionsOf(engineChoiceFromEnv({ DUB_TTS_ENGINE: 'espeak-ng' }));
    const text = 'Hola, esta es mi voz.';
    const own = await previewSpeakerVoice(job(9), runtime([]), opts, { speakerId: 'S2', text });
    expect(own).toMatchObject({ speaker: 'S2', voice_source: 'matched', tts_engine: 'espeak-ng' });
    const library = await previewSpeakerVoice(job(9), runtime([]), opts, { speakerId: 'S2', text, voice: { source: 'library', library_voice_id: 'ana' } });
    expect(library.voice_source).toBe('library:ana');
    const f0 = async (b: Buffer) => {
      const a = await readWav(new Uint8Array(b));
      return medianPitch(a.channels[0]!, a.sampleRate);
    };
    // S2 is the high female voice; the anonymized one is moved away from it
    const anonymized = await previewSpeakerVoice(job(9), runtime([]), opts, { speakerId: 'S2', text, voice: { source: 'anonymized', anonymization: 1 } });
    expect(await f0(own.wav)).toBeGreaterThan(180);
    expect(Math.abs(semitones(await f0(anonymized.wav), await f0(own.wav)))).toBeGreaterThan(2);
    // the same choice again comes from the cache
    expect((await previewSpeakerVoice(job(9), runtime([]), opts, { speakerId: 'S2', text })).cached).toBe(true);
    await expect(previewSpeakerVoice(job(9), runtime([]), opts, { speakerId: 'S7', text })).rejects.toMatchObject({ status: 404 });
  });

  it('voice-over with a library voice: the library voice for every speaker, delayed over the original', async () => {
    const events: EmittedEvent[] = [];
    await generateVersion(job(3, { voice_over: true, voice_library_id: 'ana' }), runtime(events), ESPEAK);
    const e = generated(events);
    expect(e.background_key).toBeUndefined();
    const [f1, f2] = await lineF0s(e);
    expect(f1!).toBeGreaterThan(160);
    expect(f2!).toBeGreaterThan(160);
    expect(Math.abs(semitones(f1!, f2!))).toBeLessThan(2);
    // the dubbed speech sits 0.3 s late in the result (cross-correlation peak)
    const sp = await wav16k(store.localPath(e.speech_key!)!, 'vo-speech');
    const out = await wav16k(store.localPath(e.result_audio_key)!, 'vo-out');
    let best = 0;
    let bestV = -Infinity;
    for (let lag = 0; lag <= 0.6 * 16000; lag += 2) {
      let v = 0;
      for (let i = 0; i + lag < 3 * 16000; i += 2) v += sp[i]! * out[i + lag]!;
      if (v > bestV) [best, bestV] = [lag, v];
    }
    expect(Math.abs(best / 16000 - 0.3)).toBeLessThan(0.005);
    // the original audio stays in the voice-over mix (strongly correlated with the source) and not in the replace mix
    const original = await wav16k(sourceFile, 'source');
    const replaced = await wav16k(store.localPath(first.result_audio_key)!, 'replace-out');
    expect(correlation(original, out, 0, DURATION)).toBeGreaterThan(0.2);
    expect(Math.abs(correlation(original, replaced, 0, DURATION))).toBeLessThan(0.1);
    expect(Math.abs((await probe(store.localPath(e.result_video_key)!)).duration - DURATION)).toBeLessThan(0.05);
  });

  it('anonymization moves the dubbed voice away from the speaker', async () => {
    const events: EmittedEvent[] = [];
    await generateVersion(job(4, { voice_anonymization: 1 }), runtime(events), ESPEAK);
    const [a1, a2] = await lineF0s(generated(events));
    const [f1, f2] = await lineF0s(first);
    expect(semitones(f1!, a1!)).toBeGreaterThan(5); // the male speaker goes up
    expect(semitones(f2!, a2!)).toBeLessThan(-5); // the female speaker goes down
  });

  it('with_lips: the lips stage runs before the mux; a face-less video passes through, re-encoded, same size and duration', async () => {
    const events: EmittedEvent[] = [];
    await generateVersion(job(5, { lips_model: 'real_face_turbo' }, 'with_lips'), runtime(events), ESPEAK);
    const e = generated(events);
    expect(events.some((x) => x.type === 'stage_done' && x.stage === 'lips' && !x.cached)).toBe(true);
    const [src, res] = await Promise.all([probe(sourceFile), probe(store.localPath(e.result_video_key)!)]);
    expect([res.video!.width, res.video!.height]).toEqual([src.video!.width, src.video!.height]);
    expect(Math.abs(res.duration - DURATION)).toBeLessThan(0.1);
    expect(res.audio).toHaveLength(1);
  });

  it('DUB_TTS_ENGINE=piper without a Piper voice fails the version naming the fetch command, never substituted by espeak-ng', async () => {
    const events: EmittedEvent[] = [];
    const options = generateOptionsOf(engineChoiceFromEnv({ DUB_TTS_ENGINE: 'piper' }));
    expect(options).toEqual({ tts: { engine: 'piper' } });
    await expect(generateVersion(job(6), runtime(events), options)).rejects.toThrow(/dub models fetch piper-/);
    expect(events.some((x) => x.type === 'version_generated')).toBe(false);
  });
});

describe('lines synthesized several at once', () => {
  it('espeak-ng lines at once (1 or 3) give the same lines, byte for byte, and the same speech timeline; model engines one at a time', async () => {
    expect(linesAtOnce('espeak-ng', 'none', 2)).toBe(2);
    expect(linesAtOnce('espeak-ng', 'none', 16)).toBe(4);
    expect(linesAtOnce('espeak-ng', 'openvoice', 16)).toBe(1);
    expect(linesAtOnce('piper', 'none', 16)).toBe(1);
    expect(linesAtOnce('chatterbox', 'none', 16)).toBe(1);
    // Two copies of the store with the prepared inputs only (transcript, script, source, background, references).
    const copies = [];
    for (const n of [1, 3]) {
      const root = path.join(dir, `at-once-${n}`);
      await fsp.cp(path.join(dir, 'store'), root, { recursive: true });
      const artifacts = path.join(root, 'assets', ASSET, 'artifacts');
      for (const d of await fsp.readdir(artifacts)) if (!/^(separation|speakers)-/.test(d)) await fsp.rm(path.join(artifacts, d), { recursive: true });
      await fsp.rm(path.join(root, 'versions', VERSION), { recursive: true, force: true });
      const script = JSON.parse((await store.getBuffer(blobKeys.script(VERSION))).toString()) as VersionScript;
      const s = new FsBlobStore(root);
      await s.put(blobKeys.script(VERSION), JSON.stringify({ ...script, segments: script.segments.map((x) => ({ ...x, target_words: undefined })) }));
      const events: EmittedEvent[] = [];
      await generateVersion(job(1), { ...runtime(events), store: s }, { ...ESPEAK, synthesis: { linesAtOnce: n } });
      const lines = (await s.list(`assets/${ASSET}/artifacts/synthesis-`)).filter((k) => k.endsWith('speech.wav')).sort();
      copies.push({ s, lines, speech: await fsp.readFile(s.localPath(generated(events).speech_key!)!) });
    }
    expect(copies[0]!.lines).toHaveLength(LINES.length);
    expect(copies[1]!.lines).toEqual(copies[0]!.lines);
    for (const k of copies[0]!.lines) expect((await fsp.readFile(copies[1]!.s.localPath(k)!)).equals(await fsp.readFile(copies[0]!.s.localPath(k)!))).toBe(true);
    expect(copies[1]!.speech.equals(copies[0]!.speech)).toBe(true);
  });
});

describe('Piper once its voice is installed', () => {
  it('the first generate speaks with espeak-ng; copying a Piper-shaped es_ES voice in place makes the next one re-synthesize with Piper (source stage reused), and the event names model, sha256, provider and reason; auto takes Piper where Kokoro does not speak the locale', async () => {
    const modelsDir = path.join(dir, 'models-auto');
    await fsp.mkdir(modelsDir, { recursive: true });
    const rt = (events: EmittedEvent[]): JobRuntime => ({ ...runtime(events), config: loadConfig({ DUB_TMP_DIR: path.join(dir, 'tmp'), DUB_MODELS_DIR: modelsDir }) });
    const before: EmittedEvent[] = [];
    await generateVersion(job(20), rt(before), ESPEAK);
    expect(generated(before).engines?.tts).toMatchObject({ id: 'espeak-ng', label: 'espeak-ng', selected: 'explicit', reason: 'DUB_TTS_ENGINE=espeak-ng' });
    // auto without the voice: Kokoro (set-up installs it) for es-ES, espeak-ng for German, naming Piper's fetch
    expect((await TTS_ENGINES.resolve('auto', 'de-DE', { models: { modelsDir } })).record).toMatchObject({ id: 'espeak-ng', reason: expect.stringMatching(/npx dub models fetch piper-de_DE-thorsten-medium/) });
    expect(generated(before).engines?.tts?.sha256).toBeUndefined();

    // "Install" the voice: the tiny generated model with the Piper export's inputs and outputs.
    const voiceDir = path.join(modelsDir, 'piper-es_ES-davefx-medium');
    await fsp.mkdir(voiceDir, { recursive: true });
    const fixtures = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..', 'voice', 'fixtures');
    await fsp.copyFile(path.join(fixtures, 'tiny-piper.onnx'), path.join(voiceDir, 'es_ES-davefx-medium.onnx'));
    await fsp.copyFile(path.join(fixtures, 'tiny-piper.onnx.json'), path.join(voiceDir, 'es_ES-davefx-medium.onnx.json'));
    const { createHash } = await import('node:crypto');
    const sha = createHash('sha256').update(await fsp.readFile(path.join(fixtures, 'tiny-piper.onnx'))).digest('hex');

    // auto never prefers Piper over Kokoro (issue #25: the lessac-derived voices); it takes Piper where Kokoro does not speak
    expect((await TTS_ENGINES.resolve('auto', 'es-ES', { models: { modelsDir } })).id).toBe('kokoro');
    await fsp.mkdir(path.join(modelsDir, 'piper-de_DE-thorsten-medium'), { recursive: true });
    await fsp.copyFile(path.join(fixtures, 'tiny-piper.onnx'), path.join(modelsDir, 'piper-de_DE-thorsten-medium', 'de_DE-thorsten-medium.onnx'));
    await fsp.copyFile(path.join(fixtures, 'tiny-piper.onnx.json'), path.join(modelsDir, 'piper-de_DE-thorsten-medium', 'de_DE-thorsten-medium.onnx.json'));
    expect((await TTS_ENGINES.resolve('auto', 'de-DE', { models: { modelsDir } })).record).toMatchObject({ id: 'piper', label: 'Piper de_DE-thorsten-medium', sha256: sha, selected: 'auto', reason: 'auto: the Piper voice de_DE-thorsten-medium is installed' });
    const after: EmittedEvent[] = [];
    await generateVersion(job(21), rt(after), { tts: { engine: 'piper' } });
    const tts = generated(after).engines?.tts;
    expect(tts).toEqual({ id: 'piper', label: 'Piper es_ES-davefx-medium', model: 'es_ES-davefx-medium.onnx', sha256: sha, size: (await fsp.stat(path.join(fixtures, 'tiny-piper.onnx'))).size, model_id: 'piper-es_ES-davefx-medium', license: 'CC0-1.0', commercial: 'unclear', provider: 'cpu', selected: 'explicit', reason: 'DUB_TTS_ENGINE=piper' });
    const done = (events: EmittedEvent[], stage: string) => events.find((x): x is Extract<EmittedEvent, { type: 'stage_done' }> => x.type === 'stage_done' && x.stage === stage);
    expect(done(after, 'source')?.cached).toBe(true);
    expect(done(after, 'synthesis')?.cached).toBe(false);
    expect(done(after, 'timeline')?.cached).toBe(false);
    // The speech timeline is Piper's (22.05 kHz, the voice config's rate), not espeak-ng's.
    expect((await readWav(store.localPath(generated(after).speech_key!)!)).sampleRate).toBe(22050);
    // The translation and prepare records come with the generation's.
    // (a script written before its engines were recorded: the label of an engine no registry knows is its id)
    expect(generated(after).engines?.translation).toEqual({ id: 'test', label: 'test', selected: 'auto' });
  });
});

describe('DUB_TTS_ENGINE=piper in the worker\'s handlers', () => {
  it('the handlers a worker creates (createJobHandlers, reading its environment) synthesize with Piper when the voice is installed, recorded as an explicit choice', async () => {
    const modelsDir = path.join(dir, 'models-explicit-piper');
    const voiceDir = path.join(modelsDir, 'piper-es_ES-davefx-medium');
    await fsp.mkdir(voiceDir, { recursive: true });
    const fixtures = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..', 'voice', 'fixtures');
    await fsp.copyFile(path.join(fixtures, 'tiny-piper.onnx'), path.join(voiceDir, 'es_ES-davefx-medium.onnx'));
    await fsp.copyFile(path.join(fixtures, 'tiny-piper.onnx.json'), path.join(voiceDir, 'es_ES-davefx-medium.onnx.json'));
    vi.stubEnv('DUB_TTS_ENGINE', 'piper');
    let handlers;
    try {
      handlers = createJobHandlers();
    } finally {
      vi.unstubAllEnvs();
    }
    const events: EmittedEvent[] = [];
    await handlers['generate-version']!(job(25), { ...runtime(events), config: loadConfig({ DUB_TMP_DIR: path.join(dir, 'tmp'), DUB_MODELS_DIR: modelsDir }) });
    expect(generated(events).engines?.tts).toMatchObject({ id: 'piper', label: 'Piper es_ES-davefx-medium', model: 'es_ES-davefx-medium.onnx', provider: 'cpu', selected: 'explicit' });
    expect((await readWav(store.localPath(generated(events).speech_key!)!)).sampleRate).toBe(22050);
    // and the stretch filter the lines were fitted with, as this ffmpeg offers it
    expect(generated(events).engines?.time_stretch).toEqual(stretchRecord((await detectStretchers())[0] ?? 'atempo'));
  });
  it('the time stretch record says which filter and why', () => {
    expect(stretchRecord('rubberband')).toEqual({ id: 'rubberband', label: 'rubberband', selected: 'auto', reason: 'auto: this ffmpeg has the rubberband filter (pitch-preserving phase vocoder)' });
    expect(stretchRecord('atempo')).toMatchObject({ id: 'atempo', label: 'atempo', selected: 'auto', reason: expect.stringMatching(/^auto: this ffmpeg has no rubberband filter/) });
  });
});

describe('voice conversion (OpenVoice V2) chosen by auto once installed', () => {
  it('copying the converter export (the stand-in with its signature) in place converts every line: the event names it with sha256 and provider; explicit without the model fails naming the fetch command', async () => {
    const modelsDir = path.join(dir, 'models-vc');
    const rt = (events: EmittedEvent[]): JobRuntime => ({ ...runtime(events), config: loadConfig({ DUB_TMP_DIR: path.join(dir, 'tmp'), DUB_MODELS_DIR: modelsDir }) });
    await fsp.mkdir(modelsDir, { recursive: true });
    const missing: EmittedEvent[] = [];
    await expect(generateVersion(job(30), rt(missing), { ...ESPEAK, ...generateOptionsOf(engineChoiceFromEnv({ DUB_VOICE_CONVERSION: 'openvoice' })) })).rejects.toThrow(/npx dub models fetch openvoice-v2-tone-clone/);
    const none: EmittedEvent[] = [];
    await generateVersion(job(31), rt(none), ESPEAK);
    expect(generated(none).engines?.voice_conversion).toEqual({ id: 'none', label: 'no voice conversion', selected: 'auto', reason: 'auto: no voice conversion model here (npx dub models fetch openvoice-v2-tone-clone)' });

    const vcDir = path.join(modelsDir, 'openvoice-v2-tone-clone');
    const fixtures = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..', 'voice', 'fixtures', 'openvoice-tiny');
    await fsp.cp(fixtures, vcDir, { recursive: true });
    const after: EmittedEvent[] = [];
    await generateVersion(job(32), rt(after), ESPEAK);
    const vc = generated(after).engines?.voice_conversion;
    const { createHash } = await import('node:crypto');
    const sha = createHash('sha256').update(await fsp.readFile(path.join(vcDir, 'tone_clone_model.onnx'))).digest('hex');
    expect(vc).toMatchObject({ id: 'openvoice', label: 'OpenVoice V2 tone colour', model: 'tone_clone_model.onnx', sha256: sha, provider: 'cpu', selected: 'auto', reason: 'auto: the OpenVoice V2 tone-colour converter is installed' });
    expect(vc?.files?.map((f) => f.name)).toEqual(['tone_clone_model.onnx', 'tone_color_extract_model.onnx', 'configuration.json']);
    const done = (events: EmittedEvent[], stage: string) => events.find((x): x is Extract<EmittedEvent, { type: 'stage_done' }> => x.type === 'stage_done' && x.stage === stage);
    expect(done(after, 'voices')?.cached).toBe(false);
    expect(done(after, 'synthesis')?.cached).toBe(false);
    expect(done(after, 'source')?.cached).toBe(true);
    expect(engineChoiceFromEnv({ DUB_VOICE_CONVERSION: 'none' }).voiceConversion).toBe('none');
    expect(() => engineChoiceFromEnv({ DUB_VOICE_CONVERSION: 'rvc' })).toThrow(/DUB_VOICE_CONVERSION="rvc" is not an engine: auto, openvoice, none/);
  });
});

describe('voice cloning (Chatterbox Multilingual) by DUB_TTS_ENGINE=chatterbox', () => {
  it('without the export it fails naming the fetch command; auto on CPU keeps espeak-ng and says why; with the stand-in (the export signature) every line is spoken from its speaker\'s reference clip at 24 kHz and the event names the model', async () => {
    const modelsDir = path.join(dir, 'models-clone');
    await fsp.mkdir(modelsDir, { recursive: true });
    const rt = (events: EmittedEvent[], device = 'cpu'): JobRuntime => ({ ...runtime(events), config: loadConfig({ DUB_TMP_DIR: path.join(dir, 'tmp'), DUB_MODELS_DIR: modelsDir, DUB_DEVICE: device }) });
    const options = generateOptionsOf(engineChoiceFromEnv({ DUB_TTS_ENGINE: 'chatterbox' }));
    expect(options).toEqual({ tts: { engine: 'chatterbox' } });
    const missing: EmittedEvent[] = [];
    await expect(generateVersion(job(40), rt(missing), options)).rejects.toThrow(/npx dub models fetch chatterbox-multilingual/);
    expect(missing.some((x) => x.type === 'version_generated')).toBe(false);

    // "Install" the export: the tiny stand-in with its signature.
    const cbDir = path.join(modelsDir, 'chatterbox-multilingual');
    await fsp.cp(path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..', 'voice', 'fixtures', 'chatterbox-tiny'), cbDir, { recursive: true });
    expect((await TTS_ENGINES.resolve('auto', 'es-ES', { models: { modelsDir }, device: 'cuda' })).record).toMatchObject({ id: 'chatterbox', label: 'Chatterbox Multilingual', selected: 'auto', reason: expect.stringMatching(/installed and the device is cuda/), model: 'language_model.onnx' });
    expect((await TTS_ENGINES.resolve('auto', 'ca-ES', { models: { modelsDir }, device: 'cuda' })).record).toMatchObject({ id: 'espeak-ng' });
    // auto on CPU: the next engine (Kokoro for es-ES, installed by set-up), the reason saying why not Chatterbox
    expect((await TTS_ENGINES.resolve('auto', 'es-ES', { models: { modelsDir }, device: 'cpu' })).record).toMatchObject({ id: 'kokoro', selected: 'auto', reason: expect.stringMatching(/Chatterbox Multilingual is installed but auto uses it only on a CUDA device/) });

    const events: EmittedEvent[] = [];
    await generateVersion(job(42), rt(events), options);
    const { createHash } = await import('node:crypto');
    const lm = path.join(cbDir, 'language_model.onnx');
    const sha = createHash('sha256').update(await fsp.readFile(lm)).digest('hex');
    expect(generated(events).engines?.tts).toEqual({ id: 'chatterbox', label: 'Chatterbox Multilingual', model: 'language_model.onnx', sha256: sha, size: (await fsp.stat(lm)).size, model_id: 'chatterbox-multilingual', license: 'MIT', commercial: 'yes', provider: 'cpu', selected: 'explicit', reason: 'DUB_TTS_ENGINE=chatterbox' });
    const report = JSON.parse((await store.getBuffer(blobKeys.qualityReport(VERSION, 42))).toString()) as { speakers: { found: { id: string; voice: string }[] } };
    expect(report.speakers.found.map((f) => [f.id, f.voice])).toEqual([['S1', 'cloned'], ['S2', 'cloned']]);
    // the timeline is the export's 24 kHz, and every line has speech where its slot is
    const tl = await readWav(store.localPath(generated(events).speech_key!)!);
    expect(tl.sampleRate).toBe(24000);
    for (const [i, l] of LINES.entries()) expect(rmsDb(tl.channels[0]!, 24000, l.start + 0.1, l.start + 0.6), `line ${i}`).toBeGreaterThan(-40);
  });
});

describe('the tts record of a Chatterbox run without its language\'s reference text step', () => {
  it('says so after the reason for zh, ja, he, ru (the record generate writes takes the choice\'s reason); other languages and engines keep theirs', () => {
    const explicit = { id: 'chatterbox' as const, selected: 'explicit' as const, reason: 'DUB_TTS_ENGINE=chatterbox', models: [] };
    expect(withTextStepNote(explicit, 'zh-CN').reason).toBe('DUB_TTS_ENGINE=chatterbox; text step not ported for zh: Cangjie codes (Cangjie5_TC.json + pkuseg segmentation) (tokenized without it)');
    expect(withTextStepNote(explicit, 'ru-RU').reason).toBe('DUB_TTS_ENGINE=chatterbox; text step not ported for ru: stress marks (russian_text_stresser) (tokenized without it)');
    expect(withTextStepNote(explicit, 'he-IL').reason).toMatch(/; text step not ported for he: diacritics \(dicta\)/);
    expect(withTextStepNote(explicit, 'ja-JP').reason).toMatch(/; text step not ported for ja: kanji to hiragana \(pykakasi\)/);
    expect(withTextStepNote(explicit, 'es-ES')).toEqual(explicit);
    expect(withTextStepNote(explicit, 'ko-KR')).toEqual(explicit);
    const espeak = { id: 'espeak-ng' as const, selected: 'auto' as const, reason: 'auto: no Piper voice is listed for zh-CN', models: [] };
    expect(withTextStepNote(espeak, 'zh-CN')).toEqual(espeak);
  });
});

describe('engine choice from the environment', () => {
  it('auto or unset keeps the defaults; explicit engines become generate options; unknown values are refused naming the variable', () => {
    expect(generateOptionsOf(engineChoiceFromEnv({}))).toEqual({});
    expect(engineChoiceFromEnv({ DUB_TTS_ENGINE: 'auto', DUB_LIPS_ENGINE: ' auto ' })).toEqual({ separation: 'auto', vad: 'auto', asr: 'auto', voiceConversion: 'auto', tts: 'auto', lips: 'auto', speaker: 'auto', policy: 'any' });
    expect(engineChoiceFromEnv({ DUB_MODEL_POLICY: 'commercial' }).policy).toBe('commercial');
    expect(engineChoiceFromEnv({ DUB_ASR_ENGINE: 'whisper' }).asr).toBe('whisper');
    expect(() => engineChoiceFromEnv({ DUB_ASR_ENGINE: 'kaldi' })).toThrow(/DUB_ASR_ENGINE="kaldi" is not an engine: auto, whisper, pocketsphinx/);
    expect(engineChoiceFromEnv({ DUB_SPEAKER_ENGINE: 'wespeaker' }).speaker).toBe('wespeaker');
    expect(() => engineChoiceFromEnv({ DUB_SPEAKER_ENGINE: 'pyannote' })).toThrow(/DUB_SPEAKER_ENGINE="pyannote" is not an engine: auto, wespeaker, mfcc/);
    expect(generateOptionsOf(engineChoiceFromEnv({ DUB_TTS_ENGINE: 'espeak-ng', DUB_LIPS_ENGINE: 'wav2lip' }))).toEqual({ tts: { engine: 'espeak-ng' }, lips: { engine: 'wav2lip' } });
    expect(() => engineChoiceFromEnv({ DUB_TTS_ENGINE: 'coqui' })).toThrow(/DUB_TTS_ENGINE="coqui" is not an engine: auto, espeak-ng, piper, kokoro/);
    expect(() => engineChoiceFromEnv({ DUB_LIPS_ENGINE: 'sadtalker' })).toThrow(/DUB_LIPS_ENGINE="sadtalker" is not an engine: auto, wav2lip, musetalk, viseme-warp/);
  });
});
