/**
 * Separate only what needs separating, on real recordings from ../shared/media that the
 * thresholds were NOT fitted on (fitted: two-speakers-call, jfk and their mixes with
 * music-coffee; held out: voice-ref-b, and music-coffee on its own):
 *  - clean speech (voice-ref-b as a video): prepare runs no model; the speech track is the source
 *    audio, the background the source outside speech (silence in it); the transcript records the
 *    decision, its measurement and what was kept;
 *  - the same speech over music-coffee (10 dB under it, with a 20 s music intro): background
 *    found, the model planned on the speech only, the intro left to the mix;
 *  - music only: no speech, the mix is background.
 * The plans use the real Silero VAD on the mix, as prepare does; the model itself is not run here
 * (the separation package's tests run HTDemucs on spans).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { blobKeys, TranscriptSchema, validate, type PrepareAssetJob, type Transcript } from '@dub/core';
import { readWav, runFfmpeg, writeWav, type PlanarAudio } from '@dub/media';
import { defaultStages, prepareAsset } from '@dub/pipeline';
import { eventsOf, makeRuntime, MEDIA, videoFromWav, type TestRuntime } from './prepare-helpers.js';
import { describeWithMedia, hasMedia } from './support/media.js';

let rt: TestRuntime;
let speechWav: string;
let musicWav: string;

beforeAll(async () => {
  if (!hasMedia('voice-ref-b.mp3', 'music-coffee.wav')) return;
  rt = makeRuntime();
  speechWav = path.join(rt.dir, 'voice.wav');
  musicWav = path.join(rt.dir, 'music.wav');
  await runFfmpeg(['-i', path.join(MEDIA, 'voice-ref-b.mp3'), '-ac', '2', '-ar', '44100', '-c:a', 'pcm_f32le', '-f', 'wav', speechWav]);
  await runFfmpeg(['-i', path.join(MEDIA, 'music-coffee.wav'), '-t', '60', '-ac', '2', '-ar', '44100', '-c:a', 'pcm_f32le', '-f', 'wav', musicWav]);
}, 120_000);

afterAll(async () => {
  if (!rt) return;
  await rt.sessions.disposeAll();
  fs.rmSync(rt.dir, { recursive: true, force: true });
});

function rms(x: Float32Array): number {
  let s = 0;
  for (const v of x) s += v * v;
  return Math.sqrt(s / Math.max(1, x.length));
}

const env = () => ({ config: rt.config, sessions: rt.sessions, tmpDir: path.join(rt.dir, 'tmp') });

async function planOf(file: string) {
  return (await defaultStages.planSeparation(file, env(), {})).plan;
}

describeWithMedia(['voice-ref-b.mp3', 'music-coffee.wav'], 'separation plan on held-out recordings', () => {
  it('clean speech: prepare runs no model, speech = the source audio, background = the source outside speech, recorded in the transcript', async () => {
    const asset = 'ast_clean';
    const video = videoFromWav(speechWav, path.join(rt.dir, 'clean.mp4'));
    await rt.store.putFile(blobKeys.sourceUpload(asset), video);
    const job: PrepareAssetJob = { v: 1, type: 'prepare-asset', job_id: 'job-clean', asset_id: asset, locale: 'en-US', media: { blob: blobKeys.sourceUpload(asset) }, speakers_count: 1, versions: [] };
    const res = await prepareAsset(job, rt);
    const transcript = validate<Transcript>(TranscriptSchema, JSON.parse((await rt.store.getBuffer(blobKeys.transcript(asset))).toString('utf8')), 'transcript');
    expect(transcript.separation).toMatchObject({ engine: 'none', mode: 'none', background: false, model_seconds: 0 });
    expect(transcript.separation!.reason).toMatch(/no background/);
    expect(transcript.separation!.measurement!.gap_to_speech_db as number).toBeLessThan(-30);
    expect(res.transcript.segments.length).toBeGreaterThan(0);
    // Speech track = the source's audio; background = the source outside speech, silence in it, the same length.
    const speech = await readWav(rt.store.localPath(transcript.tracks!.speech)!);
    const background = await readWav(rt.store.localPath(transcript.tracks!.background)!);
    const done = eventsOf(rt, 'stage_done').map((e) => e.stage);
    expect(done.filter((s) => s !== 'trim' && s !== 'thumbnail').slice(0, 4)).toEqual(['probe', 'audio', 'separation-plan', 'separation']);
    expect(done.filter((s) => s === 'trim' || s === 'thumbnail')).toEqual(['trim', 'thumbnail']);
    expect(background.channels[0]!.length).toBe(speech.channels[0]!.length);
    const kept = transcript.separation!.kept!;
    expect(kept).toMatchObject({ outside_speech: 'source', under_speech: 'silence' });
    const at = (s: number) => Math.round(s * 44100);
    for (const r of kept.replaced) expect(background.channels[0]!.subarray(at(r.start) + 1, at(r.end) - 1).every((v) => v === 0)).toBe(true);
    // outside the replaced regions and their fades: the source's samples
    let compared = 0;
    for (let i = 0; i <= kept.replaced.length; i++) {
      const a = i === 0 ? 0 : kept.replaced[i - 1]!.end + kept.crossfade_seconds + 0.001;
      const b = i < kept.replaced.length ? kept.replaced[i]!.start - kept.crossfade_seconds - 0.001 : transcript.duration;
      if (b <= a) continue;
      expect(background.channels[0]!.subarray(at(a), at(b))).toEqual(speech.channels[0]!.subarray(at(a), at(b)));
      compared += b - a;
    }
    expect(compared).toBeCloseTo(kept.kept_seconds, 0);
    expect(rms(speech.channels[0]!)).toBeGreaterThan(0.01);
  });

  /** voice-ref-b after a 20 s music intro, music-coffee under it at `snrDb` speech-to-music. */
  async function speechOverMusic(snrDb: number): Promise<{ file: string; seconds: number }> {
    const voice = await readWav(speechWav);
    const music = await readWav(musicWav);
    const lead = 20 * 44100;
    const n = voice.channels[0]!.length + lead;
    const gain = rms(voice.channels[0]!) / rms(music.channels[0]!) / 10 ** (snrDb / 20);
    const channels = [0, 1].map((c) => Float32Array.from({ length: n }, (_, i) => gain * music.channels[c]![i % music.channels[c]!.length]! + (i >= lead ? voice.channels[c]![i - lead]! : 0)));
    const file = path.join(rt.dir, `speech-music-${snrDb}.wav`);
    await writeWav(file, { sampleRate: 44100, channels } satisfies PlanarAudio, { format: 'float32' });
    return { file, seconds: n / 44100 };
  }

  for (const snr of [10, 0]) {
    it(`speech over music (${snr} dB) after a music intro: background found, the model planned on all of the speech only`, async () => {
      const { file, seconds } = await speechOverMusic(snr);
      const plan = await planOf(file);
      expect(plan.background).toBe(true);
      expect(plan.mode).toBe('spans');
      // the speech runs from 20 s to the end: one span covers all of it...
      expect(plan.spans.at(-1)!.end).toBeCloseTo(seconds, 1);
      expect(plan.spans.at(-1)!.start).toBeLessThan(20);
      expect(plan.spans.at(-1)!.start).toBeGreaterThan(15);
      // ...and most of the intro is background as it is (a VAD false alarm in the music may add a short span)
      expect(plan.modelSeconds).toBeLessThan(seconds - 10);
    });
  }

  it('music only: no speech, the mix is the background', async () => {
    const plan = await planOf(musicWav);
    expect(plan.mode).toBe('none');
    expect(plan.background).toBe(true);
    expect(plan.modelSeconds).toBe(0);
  });
});
