/**
 * The quality stage measures a line once: generate, edit one line, generate again, and the second
 * generation measures only the edited line and the lines its placement moved; the other lines'
 * entries in the report equal the first report's. The same edited script generated on a copy of
 * the store where nothing of a generation is cached gives the same per-line entries: a line's
 * figures do not depend on whether it was measured now, alone, or in an earlier generation.
 * The lines are espeak-ng's, chosen explicitly (auto speaks English with Kokoro).
 * en-US target: back-transcription by pocketsphinx, chosen explicitly (auto takes Whisper base q8
 * from npm), when it is installed (else null with the reason);
 * then by Whisper (the tiny test model installed as whisper-base: it hears "hello world" at the
 * start of every window it decodes), where an edit measures the lines of the edited line's
 * window again (here every line: their speech fits one).
 */
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  blobKeys,
  FsBlobStore,
  loadConfig,
  silentLogger,
  type EmittedEvent,
  type GenerateVersionJob,
  type JobRuntime,
  type QualityReport,
  type QualitySegment,
  type Transcript,
  type VersionScript,
} from '@dub/core';
import { SessionCache } from '@dub/onnx';
import { encodeAudioChunked, readWav, renderTimelineBuffer, runFfmpeg, runProcess, writeWav } from '@dub/media';
import { loadTranslateConfig } from '@dub/translate';
import { measureLoudness, measureLoudnessFrames } from '@dub/mix';
import { ArtifactCache } from './artifacts.js';
import { generateVersion } from './generate.js';
import { decodeUnits, lineMeasurementKeys, wordsByLine, wordsOverLines, type QualityLine, type QualityMeasurements } from './generate-quality.js';

const ASSET = 'ast_qualitycache';
const VERSION = 'ver_qualitycache';
const DURATION = 40;
const SOURCE = [
  { id: 'seg-0001', start: 0.4, end: 2.6, speaker: 'S1', voice: 'es+m1', pitch: '20', es: 'Buenos días y bienvenidos al programa.', en: 'Good morning and welcome to the show.' },
  { id: 'seg-0002', start: 3.0, end: 4.6, speaker: 'S2', voice: 'es+f2', pitch: '70', es: 'Muchas gracias.', en: 'Thank you very much.' },
  { id: 'seg-0003', start: 4.7, end: 6.2, speaker: 'S1', voice: 'es+m1', pitch: '20', es: 'Es un placer.', en: 'It is a pleasure.' },
  { id: 'seg-0004', start: 9.0, end: 11.4, speaker: 'S2', voice: 'es+f2', pitch: '70', es: 'Empecemos con las noticias.', en: 'Let us begin with the news.' },
  { id: 'seg-0005', start: 32.0, end: 34.4, speaker: 'S1', voice: 'es+m1', pitch: '20', es: 'Hoy hace buen tiempo en la ciudad.', en: 'The weather is fine in the city today.' },
  { id: 'seg-0006', start: 35.0, end: 37.4, speaker: 'S2', voice: 'es+f2', pitch: '70', es: 'Mañana lloverá por la tarde.', en: 'Tomorrow it will rain in the afternoon.' },
];
/** The edit: a line far longer than its slot, so it delays the next one. */
const EDITED = { id: 'seg-0002', en: 'Thank you very much for having me here tonight, it is a real honour to be on this programme.' };

let dir: string;
let store: FsBlobStore;
let script: VersionScript;
let pristine: string;

/** A store as prepare left it (nothing of a generation in it), of its own. */
async function pristineCopy(name: string): Promise<FsBlobStore> {
  await fsp.cp(pristine, path.join(dir, name), { recursive: true });
  return new FsBlobStore(path.join(dir, name));
}

function runtime(s: FsBlobStore, events: EmittedEvent[], modelsDir?: string): JobRuntime {
  return {
    store: s,
    ctx: { logger: silentLogger, onProgress: () => undefined },
    config: loadConfig({ DUB_TMP_DIR: path.join(dir, 'tmp'), ...(modelsDir ? { DUB_MODELS_DIR: modelsDir } : {}) }),
    sessions: new SessionCache(),
    emit: async (e) => void events.push(e),
    enqueue: async () => undefined,
    attempt: 1,
  };
}

function job(generation: number): GenerateVersionJob {
  return { v: 1, type: 'generate-version', job_id: `job-${generation}`, asset_id: ASSET, version_id: VERSION, locale: 'en-US', mode: 'no_lips', script_key: blobKeys.script(VERSION), generation, options: {} };
}

async function generate(s: FsBlobStore, generation: number, modelsDir?: string, asr?: 'pocketsphinx'): Promise<{ report: QualityReport; quality: QualityMeasurements; speechKey: string; mixFile: string; mixUpdate: MixUpdate | undefined; audio: AudioValue }> {
  const events: EmittedEvent[] = [];
  const result = await generateVersion(job(generation), runtime(s, events, modelsDir), { translate: loadTranslateConfig({}), tts: { engine: 'espeak-ng' }, ...(asr ? { quality: { asr } } : {}) });
  const generated = events.find((e) => e.type === 'version_generated') as { speech_key: string } | undefined;
  const mix = await newestManifest(s, 'mix', 'mix.wav');
  const audio = await newestManifest(s, 'audio', 'result.m4a');
  return { report: result.report, quality: await lastQualityValue(s), speechKey: generated!.speech_key, mixFile: s.localPath(mix.files['mix.wav']!)!, mixUpdate: (mix.value as { update?: MixUpdate }).update, audio: audio.value as AudioValue };
}

type AudioValue = { chunks: { total: number; encoded: number; reused: number }; identities: { settings: string; frames: number; hashes: string[] }; hashesReused: number };

type MixUpdate = { used: true; from_generation: number; frames: number } | { used: false; reason: string };

/** The newest manifest of `stage` in the store that has file `name`. */
async function newestManifest(s: FsBlobStore, stage: string, name: string): Promise<{ files: Record<string, string>; value: unknown }> {
  const keys = (await s.list(`assets/${ASSET}/artifacts/${stage}-`)).filter((k) => k.endsWith('/manifest.json'));
  const manifests = await Promise.all(keys.map(async (k) => JSON.parse((await s.getBuffer(k)).toString('utf8')) as { created_at: string; files: Record<string, string>; value: unknown }));
  return manifests.filter((m) => m.files[name]).sort((a, b) => a.created_at.localeCompare(b.created_at)).at(-1)!;
}

/** First and last sample (in seconds) where two mono or multichannel WAVs differ; null when identical. */
async function differingSpan(a: string, b: string): Promise<{ start: number; end: number } | null> {
  const [x, y] = [await readWav(a), await readWav(b)];
  expect(x.sampleRate).toBe(y.sampleRate);
  let first = -1;
  let last = -1;
  for (let c = 0; c < x.channels.length; c++) {
    const p = x.channels[c]!;
    const q = y.channels[c]!;
    expect(p.length).toBe(q.length);
    for (let i = 0; i < p.length; i++) {
      if (p[i] !== q[i]) {
        if (first < 0 || i < first) first = i;
        if (i > last) last = i;
      }
    }
  }
  return first < 0 ? null : { start: first / x.sampleRate, end: (last + 1) / x.sampleRate };
}

/** The value of the newest `quality` stage output in the store. */
async function lastQualityValue(s: FsBlobStore): Promise<QualityMeasurements> {
  const keys = (await s.list(`assets/${ASSET}/artifacts/quality-`)).filter((k) => !k.includes('/quality-line-') && k.endsWith('/manifest.json'));
  const manifests = await Promise.all(keys.map(async (k) => JSON.parse((await s.getBuffer(k)).toString('utf8')) as { created_at: string; value: QualityMeasurements }));
  return manifests.sort((a, b) => a.created_at.localeCompare(b.created_at)).at(-1)!.value;
}

/** A segment's entry without what says whether this generation synthesized it. */
const entry = (s: QualitySegment) => ({ ...s, regenerated: undefined });

beforeAll(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'generate-quality-cache-test-'));
  await fsp.mkdir(path.join(dir, 'tmp'));
  store = new FsBlobStore(path.join(dir, 'store'));
  const clips = [];
  for (const [i, l] of SOURCE.entries()) {
    const f = path.join(dir, `line-${i}.wav`);
    await runProcess('espeak-ng', ['-v', l.voice, '-p', l.pitch, '-w', f, '--stdin'], { input: l.es });
    clips.push({ file: f, audio: await readWav(f) });
  }
  const sr = clips[0]!.audio.sampleRate;
  const speech = renderTimelineBuffer({ sampleRate: sr, channels: 1, frames: Math.round(DURATION * sr) }, SOURCE.map((l, i) => ({ atFrame: Math.round(l.start * sr), audio: clips[i]!.audio.channels })));
  const speechFile = path.join(dir, 'speech.wav');
  await writeWav(speechFile, { sampleRate: sr, channels: speech });
  const sourceFile = path.join(dir, 'source.mp4');
  await runFfmpeg([
    '-f', 'lavfi', '-i', `testsrc=size=160x120:rate=25:duration=${DURATION}`, '-i', speechFile,
    '-map', '0:v', '-map', '1:a', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-ac', '2', '-t', String(DURATION), sourceFile,
  ]);
  await store.putFile(blobKeys.sourceVideo(ASSET), sourceFile);
  const refs: Record<string, string> = {};
  for (const [i, l] of SOURCE.entries()) {
    if (refs[l.speaker]) continue;
    refs[l.speaker] = blobKeys.artifact(ASSET, 'speakers', 'test', `reference-${l.speaker}.wav`);
    await store.putFile(refs[l.speaker]!, clips[i]!.file);
  }
  const cache = new ArtifactCache(store, ASSET, { tmpDir: dir });
  const separated = await cache.run('separation', { mix: 'quality-cache-test' }, { logger: silentLogger }, async (out) => {
    const bg = path.join(out.dir, 'background.wav');
    await runFfmpeg(['-f', 'lavfi', '-i', `anoisesrc=d=${DURATION}:c=pink:a=0.005:r=44100`, '-ac', '2', bg]);
    out.addFile('background.wav', bg);
    out.addFile('speech.wav', speechFile);
    return { engine: 'test' };
  });
  const transcript: Transcript = {
    v: 1, locale: 'es-ES', engine: 'test', duration: DURATION,
    speakers: [{ id: 'S1', reference_key: refs.S1!, speech_seconds: 3 }, { id: 'S2', reference_key: refs.S2!, speech_seconds: 3 }],
    segments: SOURCE.map((l) => ({ id: l.id, start: l.start, end: l.end, speaker: l.speaker, text: l.es, words: [] })),
    tracks: { speech: separated.files['speech.wav']!, background: separated.files['background.wav']! },
  };
  await store.put(blobKeys.transcript(ASSET), JSON.stringify(transcript));
  script = {
    v: 1, asset_id: ASSET, version_id: VERSION, source_locale: 'es-ES', target_locale: 'en-US', translation_engine: 'apertium',
    speakers: transcript.speakers,
    segments: SOURCE.map((l) => ({ id: l.id, start: l.start, end: l.end, speaker: l.speaker, source_text: l.es, target_text: l.en })),
    updated_at: new Date().toISOString(),
  };
  await store.put(blobKeys.script(VERSION), JSON.stringify(script));
  // the store as prepare left it: nothing of a generation in it
  pristine = path.join(dir, 'pristine');
  await fsp.cp(path.join(dir, 'store'), pristine, { recursive: true });
}, 120_000);

/** The script with the edit applied. */
const editedScript = (): VersionScript => ({ ...script, segments: script.segments.map((s) => (s.id === EDITED.id ? { ...s, target_text: EDITED.en } : s)), updated_at: new Date().toISOString() });

afterAll(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

describe('per-line quality measurements across generations', () => {
  it('after a one-line edit only that line and the lines it moved are measured; the others keep their figures, equal to a generation with nothing cached', async () => {
    const first = await generate(store, 1, undefined, 'pocketsphinx');
    const ids = SOURCE.map((l) => l.id);
    expect(first.quality.measuredLines).toEqual(ids);
    expect(first.report.segments.map((s) => s.id)).toEqual(ids);
    const heard = first.report.segments.filter((s) => s.back_transcription.engine !== null);
    if (heard.length) {
      // pocketsphinx is installed: every line is back-transcribed, words heard
      for (const s of heard) expect(s.back_transcription, s.id).toMatchObject({ engine: 'pocketsphinx', text: expect.stringMatching(/\w/), wer: expect.any(Number) });
    } else {
      console.log(`back-transcription not measured here: ${first.report.segments[0]!.back_transcription.reason}`);
    }

    // The same script again: the whole quality stage is reused.
    const again = await generate(store, 2, undefined, 'pocketsphinx');
    expect(again.report.segments.map(entry)).toEqual(first.report.segments.map(entry));

    // Edit one line.
    const edited = editedScript();
    await store.put(blobKeys.script(VERSION), JSON.stringify(edited));
    const second = await generate(store, 3, undefined, 'pocketsphinx');
    const before = new Map(first.report.segments.map((s) => [s.id, s]));
    const moved = second.report.segments.filter((s) => s.placed.start !== before.get(s.id)!.placed.start || s.placed.end !== before.get(s.id)!.placed.end).map((s) => s.id);
    // the edit delays the next line, and leaves the first and the last where they were
    expect(moved).toEqual(['seg-0002', 'seg-0003']);
    expect(second.quality.measuredLines).toEqual(['seg-0002', 'seg-0003']);
    // synthesized again: the edited line (the moved one too where its placed length changed)
    expect(second.report.segments.filter((s) => s.regenerated).map((s) => s.id)).toContain('seg-0002');
    expect(second.report.segments.filter((s) => s.regenerated && !moved.includes(s.id))).toEqual([]);
    for (const id of ['seg-0001', 'seg-0004', 'seg-0005', 'seg-0006']) {
      const a = before.get(id)!;
      const b = second.report.segments.find((s) => s.id === id)!;
      expect(entry(b), id).toEqual(entry(a));
    }
    expect(second.report.segments.find((s) => s.id === EDITED.id)!.spoken_text).toBe(EDITED.en);

    // The edited script on the pristine copy: nothing cached, every line measured in one go.
    const fresh = await pristineCopy('fresh');
    await fresh.put(blobKeys.script(VERSION), JSON.stringify(edited));
    const full = await generate(fresh, 3, undefined, 'pocketsphinx');
    expect(full.quality.measuredLines).toEqual(ids);
    for (const [i, s] of full.report.segments.entries()) {
      const r = second.report.segments[i]!;
      expect({ loudness: r.loudness, back_transcription: r.back_transcription, speaker_similarity: r.speaker_similarity, flags: r.flags }, s.id).toEqual({ loudness: s.loudness, back_transcription: s.back_transcription, speaker_similarity: s.speaker_similarity, flags: s.flags });
      expect(entry(r), s.id).toEqual(entry(s));
    }
    expect(second.report.summary).toEqual(full.report.summary);

    // The mix: the first generation's gain is exact; the next ones keep it (within tolerance), so
    // the re-dub's mix differs from the first only where its speech timeline does (plus the limiter's reach).
    const n1 = first.report.loudness.normalization!;
    expect(n1).toMatchObject({ target_lufs: -16, kept_from_generation: null, tolerance_db: 0.5 });
    expect(n1.gain_db).toBe(n1.exact_gain_db);
    expect(again.report.loudness.normalization).toMatchObject({ gain_db: n1.gain_db, kept_from_generation: 1 });
    expect(second.report.loudness.normalization).toMatchObject({ gain_db: n1.gain_db, kept_from_generation: 2 });
    expect(Math.abs(second.report.loudness.normalization!.exact_gain_db - n1.gain_db)).toBeLessThanOrEqual(0.5);
    expect(full.report.loudness.normalization).toMatchObject({ kept_from_generation: null });
    expect(full.report.loudness.normalization!.gain_db).toBe(full.report.loudness.normalization!.exact_gain_db);
    // generation 3's mix is generation 2's with the frames near the changed speech computed again
    expect(second.mixUpdate).toMatchObject({ used: true, from_generation: 2 });
    expect(second.mixUpdate!.frames).toBeLessThan(DURATION * 48000 * 0.75);
    expect(first.mixUpdate).toEqual({ used: false, reason: 'no previous generation' });
    // the AAC chunks away from the updated frames kept generation 2's identities without being
    // read; every identity equals what hashing the whole re-dubbed mix gives
    expect(first.audio.hashesReused).toBe(0);
    expect(second.audio.hashesReused).toBeGreaterThan(0);
    expect(second.audio.hashesReused).toBeGreaterThanOrEqual(second.audio.chunks.total - second.audio.chunks.encoded - 1);
    const rehashed = await encodeAudioChunked(second.mixFile, path.join(dir, 'rehash.m4a'), { store: { get: async () => undefined, put: async () => undefined }, tmpDir: await fsp.mkdtemp(path.join(dir, 'rehash-')) });
    expect(rehashed.hashes).toEqual(second.audio.identities.hashes);
    // the dubbed track's loudness: generation 3 kept generation 2's frame peaks and hop energies
    // outside the changed chunks; its figures equal a whole measurement of its track, and ebur128's
    // own figures within their rounding
    expect(first.quality.loudnessUpdated).toBe(false);
    expect(second.quality.loudnessUpdated).toBe(true);
    const track = store.localPath(blobKeys.resultAudio(VERSION, 3))!;
    const whole = await measureLoudnessFrames(track);
    const r1 = (x: number) => Math.round(x * 10) / 10;
    expect(second.report.loudness).toMatchObject({ integrated_lufs: r1(whole.integrated), true_peak_dbtp: r1(whole.truePeak), range_lu: r1(whole.range) });
    const measured = await measureLoudness(track);
    expect(Math.abs(second.report.loudness.integrated_lufs! - measured.integrated)).toBeLessThanOrEqual(0.11);
    expect(Math.abs(second.report.loudness.range_lu! - measured.range)).toBeLessThanOrEqual(0.21);
    expect(second.report.loudness.true_peak_dbtp).toBe(r1(measured.truePeak));
    const speechChanged = await differingSpan(store.localPath(first.speechKey)!, store.localPath(second.speechKey)!);
    const mixChanged = await differingSpan(first.mixFile, second.mixFile);
    expect(speechChanged).not.toBeNull();
    expect(mixChanged).not.toBeNull();
    // the limiter's reach: 2 x 20 ms hold and mean plus its interpolation taps, and one sample of the resampler either side
    const reach = 0.05;
    expect(mixChanged!.start).toBeGreaterThanOrEqual(speechChanged!.start - reach);
    expect(mixChanged!.end).toBeLessThanOrEqual(speechChanged!.end + reach);
    expect(mixChanged!.end - mixChanged!.start).toBeLessThan(DURATION / 2);
  }, 480_000);

  it('Whisper: an edit measures again the lines of the edited line\'s 30 s window (here all: their speech fits one); the entries equal a generation with nothing cached', async () => {
    const models = path.join(dir, 'models');
    await fsp.cp(fileURLToPath(new URL('../../asr/fixtures/whisper-tiny-test', import.meta.url)), path.join(models, 'whisper-base'), { recursive: true });
    const s = await pristineCopy('whisper');
    const first = await generate(s, 1, models);
    const ids = SOURCE.map((l) => l.id);
    expect(first.quality.measuredLines).toEqual(ids);
    // the lines' speech packed into one window (though they span 37 s of the timeline); the tiny
    // model hears "hello world" at the start of a window and ends there, so every line after the
    // last one it decoded is decoded again in a window of its own (openai's seek): each line hears it
    expect(first.report.segments.map((x) => x.back_transcription.text)).toEqual(ids.map(() => 'hello world'));
    for (const x of first.report.segments) expect(x.back_transcription.engine).toBe('whisper');

    await s.put(blobKeys.script(VERSION), JSON.stringify(editedScript()));
    const second = await generate(s, 2, models);
    // the edited line's window is every line's (which windows an edit leaves alone: 'line measurement keys' below)
    expect(second.quality.measuredLines).toEqual(ids);

    const fresh = await pristineCopy('whisper-fresh');
    await fresh.put(blobKeys.script(VERSION), JSON.stringify(editedScript()));
    const full = await generate(fresh, 2, models);
    expect(full.quality.measuredLines).toEqual(ids);
    expect(second.report.segments.map(entry)).toEqual(full.report.segments.map(entry));
  }, 480_000);
});

describe('line measurement keys', () => {
  const line = (id: string, start: number, end: number, key = `k-${id}`, speaker = 'S1'): QualityLine => ({
    segment: { id, start, end, speaker, source_text: '', target_text: id },
    placement: { start, end } as QualityLine['placement'],
    spokenText: id,
    shortening: null,
    fitted: { file: `/tmp/${id}.wav`, key, speechSeconds: end - start, speedFactor: 1, cutSeconds: 0 },
    regenerated: true,
  });
  const similarity = { id: 'mfcc', embedding: 'mfcc' as const, notApplicable: {} };
  const cache = { referenceKeys: { S1: 'ref-1' }, sampleRate: 22050 };

  it('pocketsphinx: a line\'s key changes with its own audio and placement and with a line sounding over it, not with other lines', () => {
    const lines = [line('a', 0, 2), line('b', 2.5, 4), line('c', 6, 8)];
    const asr = { engine: 'pocketsphinx' };
    const k0 = lineMeasurementKeys({ lines, asr, similarity }, cache, 0);
    const edited = lineMeasurementKeys({ lines: [lines[0]!, line('b', 2.5, 4.5, 'k-b2'), lines[2]!], asr, similarity }, cache, 0);
    expect(edited.get('a')).toEqual(k0.get('a'));
    expect(edited.get('c')).toEqual(k0.get('c'));
    expect(edited.get('b')).not.toEqual(k0.get('b'));
    // a line placed over the end of `a` is in a's audio
    const overlapping = lineMeasurementKeys({ lines: [lines[0]!, line('b', 1.9, 4, 'k-b'), lines[2]!], asr, similarity }, cache, 0);
    expect(overlapping.get('a')).not.toEqual(k0.get('a'));
    // engine, model, references and the speaker's note are in every key
    expect(lineMeasurementKeys({ lines, asr: { engine: 'whisper', model: 'x' }, similarity }, cache, 30).get('c')).not.toEqual(k0.get('c'));
    expect(lineMeasurementKeys({ lines, asr, similarity }, { ...cache, referenceKeys: { S1: 'ref-2' } }, 0).get('c')).not.toEqual(k0.get('c'));
    expect(lineMeasurementKeys({ lines, asr, similarity: { ...similarity, notApplicable: { S1: 'library voice' } } }, cache, 0).get('c')).not.toEqual(k0.get('c'));
    expect(lineMeasurementKeys({ lines, asr: { engine: null, reason: 'none here' }, similarity }, cache, 0).get('a')).toMatchObject({ heard: null, asr: { engine: null, reason: 'none here' } });
  });

  it('Whisper: lines are grouped into the engine\'s 30 s chunks; an edit re-keys the lines of its chunk and the chunks after it that regroup', () => {
    const lines = [line('a', 0, 10), line('b', 12, 25), line('c', 26, 40), line('d', 41, 50), line('e', 80, 150)];
    expect(decodeUnits(lines, 'whisper', 30).map((u) => [u.lines.map((l) => l.segment.id), u.start, u.end])).toEqual([
      [['a', 'b'], 0, 25],
      [['c', 'd'], 26, 50],
      // 70 s: three parts of 23.3 s, three chunks, one unit
      [['e'], 80, 150],
    ]);
    expect(decodeUnits(lines, 'pocketsphinx', 0).map((u) => u.lines.map((l) => l.segment.id))).toEqual([['a'], ['b'], ['c'], ['d'], ['e']]);
    // the lines' speech is packed (1 s apart): lines far apart on the timeline share a window while their speech fits 30 s
    const sparse = [line('p', 0, 5), line('q', 40, 48), line('r', 100, 110), line('s', 200, 208)];
    expect(decodeUnits(sparse, 'whisper', 30).map((u) => [u.lines.map((l) => l.segment.id), u.start, u.end])).toEqual([
      [['p', 'q', 'r'], 0, 110],
      [['s'], 200, 208],
    ]);
    const asr = { engine: 'whisper' };
    const k0 = lineMeasurementKeys({ lines, asr, similarity }, cache, 30);
    const k1 = lineMeasurementKeys({ lines: [line('a', 0, 10, 'k-a2'), ...lines.slice(1)], asr, similarity }, cache, 30);
    expect(['a', 'b', 'c', 'd', 'e'].filter((id) => JSON.stringify(k0.get(id)) !== JSON.stringify(k1.get(id)))).toEqual(['a', 'b']);
  });
});

describe('words of a back-transcription by line', () => {
  it('lays a Whisper segment over the lines it spans, never in the pauses, and gives each word to its line', () => {
    const lines = [
      { id: 'a', start: 1.5, end: 4.5 },
      { id: 'b', start: 5.5, end: 8.5 },
      { id: 'c', start: 9.5, end: 12.5 },
    ];
    // one segment over the three lines, its words timed by character share over 1.5-12.5 (pauses included)
    const texts = ['uno', 'dos', 'tres', 'cuatro', 'cinco', 'seis'];
    const words = texts.map((text, i) => ({ text, start: 1.5 + (11 * i) / 6, end: 1.5 + (11 * (i + 1)) / 6 }));
    const laid = wordsOverLines([{ start: 1.5, end: 12.5, words }], lines);
    for (const w of laid) expect(lines.some((l) => w.start >= l.start && w.end <= l.end), w.text).toBe(true);
    // 25 characters over 9 s of lines, 0.36 s each: middles at 0.54, 1.62, 2.88 (line a, 0-3 s),
    // 4.68 (b, 3-6 s), 6.66 and 8.28 (c)
    expect(Object.fromEntries(wordsByLine(lines, laid))).toEqual({ a: ['uno', 'dos', 'tres'], b: ['cuatro'], c: ['cinco', 'seis'] });
    // (the times over the whole segment, pauses included, split the words otherwise)
    expect(Object.fromEntries(wordsByLine(lines, words))).not.toEqual(Object.fromEntries(wordsByLine(lines, laid)));
    // a word timed between two lines goes to the nearest, not nowhere
    expect(Object.fromEntries(wordsByLine(lines, [{ text: 'x', start: 8.6, end: 8.8 }, { text: 'y', start: 9.2, end: 9.4 }]))).toEqual({ a: [], b: ['x'], c: ['y'] });
    // a segment over no line keeps its times
    expect(wordsOverLines([{ start: 20, end: 21, words: [{ text: 'z', start: 20, end: 21 }] }], lines)).toEqual([{ text: 'z', start: 20, end: 21 }]);
  });
});
