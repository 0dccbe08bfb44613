/**
 * The prepare stages' engine choices (DUB_VAD_ENGINE, DUB_SEPARATION_ENGINE) on generated speech
 * (espeak-ng, so they run without the real recordings): the chosen engine is the one that runs,
 * the transcript's engine records say so, and the stages' cache keys hold the engine (a change of
 * engine recomputes what depends on it, nothing else).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { blobKeys, getModelEntry, loadConfig, type PrepareAssetJob } from '@dub/core';
import { readWav, runFfmpeg } from '@dub/media';
import { defaultStages, prepareAsset, type PrepareStages } from '@dub/pipeline';
import { eventsOf, makeRuntime, sameStore, spokenWav, videoFromWav, type TestRuntime } from './prepare-helpers.js';

const rt = makeRuntime();
const TEXT = 'Ask not what your country can do for you. Ask what you can do for your country.';
const SRT = `1\n00:00:00,000 --> 00:00:02,500\nAsk not what your country can do for you.\n\n2\n00:00:02,500 --> 00:00:05,000\nAsk what you can do for your country.\n`;
let cleanVideo: string;
let noisyVideo: string;

beforeAll(async () => {
  const speech = spokenWav(`${TEXT} ${TEXT}`, path.join(rt.dir, 'speech.wav'));
  cleanVideo = videoFromWav(speech, path.join(rt.dir, 'clean.mp4'));
  // The same speech over a steady chord (a background the separation plan finds between the words).
  const noisy = path.join(rt.dir, 'noisy.wav');
  await runFfmpeg(['-i', speech, '-f', 'lavfi', '-i', 'sine=f=220:d=30,volume=0.15', '-f', 'lavfi', '-i', 'sine=f=331:d=30,volume=0.1', '-filter_complex', '[0][1][2]amix=inputs=3:duration=first:normalize=0', '-ar', '44100', '-ac', '2', noisy]);
  noisyVideo = videoFromWav(noisy, path.join(rt.dir, 'noisy.mp4'));
}, 120_000);

afterAll(async () => {
  await rt.sessions.disposeAll();
  fs.rmSync(rt.dir, { recursive: true, force: true });
});

const saved = { vad: process.env.DUB_VAD_ENGINE, separation: process.env.DUB_SEPARATION_ENGINE };
afterEach(() => {
  for (const [k, v] of [['DUB_VAD_ENGINE', saved.vad], ['DUB_SEPARATION_ENGINE', saved.separation]] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

async function jobOf(asset: string, video: string): Promise<PrepareAssetJob> {
  await rt.store.putFile(blobKeys.sourceUpload(asset), video);
  return { v: 1, type: 'prepare-asset', job_id: `job-${asset}`, asset_id: asset, locale: 'en-US', media: { blob: blobKeys.sourceUpload(asset) }, source_srt: SRT, speakers_count: 1, versions: [] };
}

/** The default stages, recording the engine of every VAD run. */
function watching(vads: string[]): Partial<PrepareStages> {
  return {
    planSeparation: async (...a) => {
      const r = await defaultStages.planSeparation(...a);
      vads.push(r.vad.engine);
      return r;
    },
    detectSpeech: async (...a) => {
      const r = await defaultStages.detectSpeech(...a);
      vads.push(r.engine);
      return r;
    },
  };
}

const cachedOf = (r: TestRuntime, stage: string) => eventsOf(r, 'stage_done').find((e) => e.stage === stage)?.cached;

describe('prepare engine choices', () => {
  it('DUB_VAD_ENGINE=energy: prepare runs the energy VAD and the transcript says so; back to auto, Silero runs and only the stages that read the VAD recompute', async () => {
    process.env.DUB_VAD_ENGINE = 'energy';
    // the energy VAD's coarse regions can leave speech in the gaps the plan measures: no separation model here, whatever it finds
    process.env.DUB_SEPARATION_ENGINE = 'none';
    const job = await jobOf('ast_vad', cleanVideo);
    const vads: string[] = [];
    const first = await prepareAsset(job, rt, { stages: watching(vads) });
    expect(vads.length).toBeGreaterThan(0);
    expect(new Set(vads)).toEqual(new Set(['energy']));
    expect(first.transcript.engines?.vad).toEqual({ id: 'energy', label: 'energy VAD', selected: 'explicit', reason: 'DUB_VAD_ENGINE=energy' });
    expect(first.transcript.engines?.separation).toMatchObject({ id: 'none', label: 'no separation', selected: 'explicit' });
    // the transcript came from the job's source_srt: no recognition engine ran, and its record says so
    expect(first.transcript.engines?.asr).toEqual({ id: 'source_srt', label: 'source subtitles', selected: 'explicit', reason: 'the asset has a source_srt' });

    delete process.env.DUB_VAD_ENGINE;
    const rt2 = sameStore(rt);
    const again: string[] = [];
    const second = await prepareAsset(job, rt2, { stages: watching(again) });
    expect(new Set(again)).toEqual(new Set(['silero']));
    const silero = getModelEntry('silero-vad-v5')!.files[0]!;
    expect(second.transcript.engines?.vad).toEqual({ id: 'silero', label: 'Silero VAD v5', model: silero.name, sha256: silero.sha256, size: silero.size, model_id: 'silero-vad-v5', license: 'MIT', commercial: 'yes', provider: 'cpu', selected: 'auto', reason: 'auto: the Silero VAD model is installed' });
    // the engine is in the keys: what reads the VAD runs again, the audio before it is reused
    expect(cachedOf(rt2, 'audio')).toBe(true);
    expect(cachedOf(rt2, 'separation-plan')).toBe(false);
    expect(cachedOf(rt2, 'vad')).toBe(false);
  }, 300_000);

  it('DUB_SEPARATION_ENGINE=none on speech over a background: no model runs, the background stays in the speech track and outside speech in the background track, and the transcript says why', async () => {
    const job = await jobOf('ast_sep', noisyVideo);
    const vads: string[] = [];
    process.env.DUB_SEPARATION_ENGINE = 'none';
    const r = sameStore(rt);
    const res = await prepareAsset(job, r, { stages: watching(vads) });
    const t = res.transcript;
    expect(t.separation).toMatchObject({ engine: 'none', mode: 'none', background: false, model_seconds: 0, spans: [] });
    expect(t.separation!.reason).toMatch(/^DUB_SEPARATION_ENGINE=none: not separated, the source's audio stays in the speech track and outside speech in the background \(the plan: .+\)$/);
    expect(t.engines?.separation).toMatchObject({ id: 'none', label: 'no separation', selected: 'explicit' });
    expect(t.engines!.separation!.reason!.startsWith(`${t.separation!.reason}; the background is the source's audio outside speech`)).toBe(true);
    expect(cachedOf(r, 'separation')).toBe(false);
    // the speech track is the mix; the background the mix outside speech (the chord between the words), silence in it
    const speech = await readWav(r.store.localPath(t.tracks!.speech)!);
    const background = await readWav(r.store.localPath(t.tracks!.background)!);
    const kept = t.separation!.kept!;
    expect(kept).toMatchObject({ outside_speech: 'source', under_speech: 'silence' });
    expect(kept.replaced.length).toBeGreaterThan(0);
    const at = (s: number) => Math.round(s * 44100);
    for (const x of kept.replaced) expect(background.channels[0]!.subarray(at(x.start) + 1, at(x.end) - 1).every((v) => v === 0)).toBe(true);
    const gap = { start: kept.replaced[0]!.end + kept.crossfade_seconds + 0.01, end: (kept.replaced[1]?.start ?? t.duration) - kept.crossfade_seconds - 0.01 };
    if (gap.end > gap.start) expect(background.channels[0]!.subarray(at(gap.start), at(gap.end))).toEqual(speech.channels[0]!.subarray(at(gap.start), at(gap.end)));
    expect(speech.channels[0]!.reduce((m, v) => Math.max(m, Math.abs(v)), 0)).toBeGreaterThan(0.05);
  }, 300_000);

  it('DUB_SEPARATION_ENGINE=htdemucs-int8: the separation stage is asked for that engine, and the transcript records the int8 file and its sha256', async () => {
    // A stand-in int8 file (the stage is replaced: nothing loads it) in the runtime's models folder.
    const modelsDir = path.join(rt.dir, 'models-int8');
    fs.mkdirSync(path.join(modelsDir, 'htdemucs-int8'), { recursive: true });
    const bytes = Buffer.from('int8 stand-in for the prepare test');
    fs.writeFileSync(path.join(modelsDir, 'htdemucs-int8', 'htdemucs-int8.onnx'), bytes);
    process.env.DUB_SEPARATION_ENGINE = 'htdemucs-int8';
    const r = { ...sameStore(rt), config: loadConfig({ DUB_DATA_DIR: rt.dir, DUB_TMP_DIR: path.join(rt.dir, 'tmp'), DUB_ONNX_THREADS: '2', DUB_MODELS_DIR: modelsDir }) };
    const asked: (string | undefined)[] = [];
    const res = await prepareAsset(await jobOf('ast_int8', noisyVideo), r, {
      stages: {
        separate: async (mix, out, _given, _env, _ctx, plan, engine) => {
          asked.push(engine);
          fs.copyFileSync(mix, out.speech);
          fs.copyFileSync(mix, out.background);
          return plan?.mode === 'none' ? 'none' : engine!;
        },
      },
    });
    const t = res.transcript;
    // the chord between the words is a background: the model runs, and it is the one named
    expect(t.separation?.mode).not.toBe('none');
    expect(asked).toEqual(['htdemucs-int8']);
    expect(t.separation?.engine).toBe('htdemucs-int8');
    expect(t.engines?.separation).toMatchObject({ id: 'htdemucs-int8', label: 'HTDemucs v4 int8', model: 'htdemucs-int8.onnx', sha256: createHash('sha256').update(bytes).digest('hex'), size: bytes.length, selected: 'explicit' });
    expect(t.engines!.separation!.reason).toMatch(/^DUB_SEPARATION_ENGINE=htdemucs-int8; .*; whole graph/);
  }, 300_000);

  it('DUB_SEPARATION_ENGINE=htdemucs-int8 on clean speech: the check finds no background to separate, the model runs anyway (everywhere) and the record says both', async () => {
    const modelsDir = path.join(rt.dir, 'models-int8');
    fs.mkdirSync(path.join(modelsDir, 'htdemucs-int8'), { recursive: true });
    fs.writeFileSync(path.join(modelsDir, 'htdemucs-int8', 'htdemucs-int8.onnx'), Buffer.from('int8 stand-in for the prepare test'));
    process.env.DUB_SEPARATION_ENGINE = 'htdemucs-int8';
    const r = { ...sameStore(rt), config: loadConfig({ DUB_DATA_DIR: rt.dir, DUB_TMP_DIR: path.join(rt.dir, 'tmp'), DUB_ONNX_THREADS: '2', DUB_MODELS_DIR: modelsDir }) };
    const asked: { engine?: string; mode?: string }[] = [];
    let measured: string | undefined;
    // the clean speech between two seconds of silence: the check finds no background to separate
    const padded = path.join(rt.dir, 'padded.wav');
    await runFfmpeg(['-i', path.join(rt.dir, 'speech.wav'), '-af', 'adelay=2000:all=1,apad=pad_dur=2', '-ar', '44100', '-ac', '2', padded]);
    const res = await prepareAsset(await jobOf('ast_int8_clean', videoFromWav(padded, path.join(rt.dir, 'padded.mp4'))), r, {
      stages: {
        planSeparation: async (...a) => {
          const p = await defaultStages.planSeparation(...a);
          measured = p.plan.mode;
          return p;
        },
        separate: async (mix, out, _given, _env, _ctx, plan, engine) => {
          asked.push({ engine, mode: plan?.mode });
          fs.copyFileSync(mix, out.speech);
          fs.copyFileSync(mix, out.background);
          return plan?.mode === 'none' ? 'none' : engine!;
        },
      },
    });
    const t = res.transcript;
    expect(measured).toBe('none');
    expect(asked).toEqual([{ engine: 'htdemucs-int8', mode: 'full' }]);
    expect(t.separation).toMatchObject({ engine: 'htdemucs-int8', mode: 'full', background: false });
    expect(t.separation!.reason).toMatch(/^DUB_SEPARATION_ENGINE=htdemucs-int8: the model runs everywhere as chosen \(the check alone would run none: no background to separate: .+\)$/);
    expect(t.engines?.separation).toMatchObject({ id: 'htdemucs-int8', selected: 'explicit' });
  }, 300_000);

  it('an unknown engine is refused naming the known ones', async () => {
    process.env.DUB_VAD_ENGINE = 'webrtc';
    await expect(prepareAsset(await jobOf('ast_bad', cleanVideo), sameStore(rt))).rejects.toThrow('DUB_VAD_ENGINE="webrtc" is not an engine: auto, silero, energy');
  });
});
