/**
 * The engine config file (`--engine-config FILE` / DUB_ENGINE_CONFIG) of dub run, serve, worker
 * and doctor: it fills in the DUB_*_ENGINE choices that neither a flag nor the environment set.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { readEngineConfig, takeEngineFlags, UsageError } from './cli-args.js';

const DUB = fileURLToPath(new URL('../bin/dub.js', import.meta.url));

describe('engine config file', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-engine-config-'));
  const file = (name: string, body: string) => {
    const f = path.join(dir, name);
    fs.writeFileSync(f, body);
    return f;
  };
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('maps each stage to its variable; a flag and the environment win over the file', () => {
    const cfg = file('engines.json', JSON.stringify({ engines: { tts: 'piper', speakers: 'wespeaker', lips: 'wav2lip', vad: 'energy' } }));
    const env: NodeJS.ProcessEnv = { DUB_LIPS_ENGINE: 'viseme-warp' };
    const rest = takeEngineFlags('run', ['in.mp4', '--engine-config', cfg, '--vad-engine=silero', '--to', 'es-ES'], env);
    expect(rest).toEqual(['in.mp4', '--to', 'es-ES']);
    expect(env).toEqual({ DUB_TTS_ENGINE: 'piper', DUB_SPEAKER_ENGINE: 'wespeaker', DUB_LIPS_ENGINE: 'viseme-warp', DUB_VAD_ENGINE: 'silero' });
    // DUB_ENGINE_CONFIG names the file when no flag does
    const env2: NodeJS.ProcessEnv = { DUB_ENGINE_CONFIG: cfg };
    takeEngineFlags('worker', ['--nats', 'nats://x:4222'], env2);
    expect(env2).toMatchObject({ DUB_TTS_ENGINE: 'piper', DUB_SPEAKER_ENGINE: 'wespeaker', DUB_LIPS_ENGINE: 'wav2lip', DUB_VAD_ENGINE: 'energy' });
    // without a file nothing is added
    const env3: NodeJS.ProcessEnv = {};
    expect(takeEngineFlags('run', ['in.mp4'], env3)).toEqual(['in.mp4']);
    expect(env3).toEqual({});
  });

  it('carries the model policy: --model-policy, DUB_MODEL_POLICY, or the file\'s model_policy, in that order', () => {
    const cfg = file('policy.json', JSON.stringify({ model_policy: 'commercial' }));
    expect(readEngineConfig('run', cfg)).toEqual({ DUB_MODEL_POLICY: 'commercial' });
    const env: NodeJS.ProcessEnv = {};
    takeEngineFlags('run', ['in.mp4', '--engine-config', cfg], env);
    expect(env).toEqual({ DUB_MODEL_POLICY: 'commercial' });
    const flag: NodeJS.ProcessEnv = { DUB_MODEL_POLICY: 'commercial' };
    expect(takeEngineFlags('run', ['in.mp4', '--model-policy=any', '--engine-config', cfg], flag)).toEqual(['in.mp4']);
    expect(flag).toEqual({ DUB_MODEL_POLICY: 'any' });
    expect(() => readEngineConfig('run', file('policy-num.json', '{"model_policy": 1}'))).toThrow('model_policy must be a string (any or commercial)');
  });

  it('refuses a missing file, bad JSON, an unknown stage or a non-string value, naming the file', () => {
    const missing = path.join(dir, 'nope.json');
    expect(() => readEngineConfig('run', missing)).toThrow(UsageError);
    expect(() => readEngineConfig('run', missing)).toThrow(`engine config ${missing}: no such file`);
    expect(() => readEngineConfig('run', file('bad.json', '{"engines": '))).toThrow(/^engine config .*bad\.json: .*JSON/);
    expect(() => readEngineConfig('run', file('flat.json', '{"tts": "piper"}'))).toThrow(/expected \{"engines"/);
    expect(() => readEngineConfig('run', file('stage.json', '{"engines": {"voice": "piper"}}'))).toThrow('"voice" is not a stage: separation, vad, asr, tts, voice_conversion, speakers, lips');
    expect(() => readEngineConfig('run', file('num.json', '{"engines": {"tts": 3}}'))).toThrow('engines.tts must be a string');
    expect(() => takeEngineFlags('run', ['--engine-config'], {})).toThrow('--engine-config needs a value');
  });

  it('dub doctor reads it: a Piper choice from the file without a Piper voice cannot run; the environment overrides it', () => {
    const cfg = file('piper.json', JSON.stringify({ engines: { tts: 'piper' } }));
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^DUB_(TTS_ENGINE|ENGINE_CONFIG|TRANSLATE_ENGINE.*)$/.test(k)));
    const piper = spawnSync(process.execPath, [DUB, 'doctor', '--from', 'en-US', '--to', 'es-ES', '--engine-config', cfg], { env, encoding: 'utf8' });
    expect(piper.status, piper.stderr).toBe(1);
    expect(piper.stdout).toMatch(/^NO +speech synthesis +piper .*\n +missing: npx dub models fetch piper-es_ES-davefx-medium$/m);
    const espeak = spawnSync(process.execPath, [DUB, 'doctor', '--from', 'en-US', '--to', 'es-ES', '--json'], { env: { ...env, DUB_ENGINE_CONFIG: cfg, DUB_TTS_ENGINE: 'espeak-ng' }, encoding: 'utf8' });
    expect(espeak.status, espeak.stderr).toBe(0);
    const rows = (JSON.parse(espeak.stdout) as { stages: { stage: string; engine: string }[] }).stages;
    expect(rows.find((r) => r.stage === 'speech synthesis')?.engine).toBe('espeak-ng');
    // translation: no variable set, so the reason is auto's choice for the pair, not a variable
    expect(rows.find((r) => r.stage === 'translation')).toMatchObject({ engine: 'apertium', why: 'auto: apertium has a direct mode (eng-spa)' });
    const deepl = spawnSync(process.execPath, [DUB, 'doctor', '--from', 'en-US', '--to', 'es-ES', '--json'], { env: { ...env, DUB_TRANSLATE_ENGINE: 'apertium' }, encoding: 'utf8' });
    expect((JSON.parse(deepl.stdout) as { stages: { stage: string; why: string }[] }).stages.find((r) => r.stage === 'translation')?.why).toBe('from DUB_TRANSLATE_ENGINE');
    // a value that is no engine is refused like the variable it sets
    const bad = spawnSync(process.execPath, [DUB, 'doctor', '--from', 'en-US', '--to', 'es-ES', '--engine-config', file('coqui.json', '{"engines": {"tts": "coqui"}}')], { env, encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/DUB_TTS_ENGINE="coqui" is not an engine/);
  });
});
