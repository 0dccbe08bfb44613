/**
 * `dub run` through the offline model: with M2M100's files installed (here the tiny stand-in of
 * packages/translate/fixtures/m2m100-tiny-test, put in a private DUB_MODELS_DIR as m2m100-418m)
 * and no apertium mode for the pair, `auto` translates en-US -> de-DE with M2M100 and the run's
 * engines.json names it: engine, the decoder file's sha256 and size, its licence, why it ran. The
 * stand-in copies its source, so the German "translation" is the English line: this checks the
 * wiring, not translation quality (no real weights here).
 */
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { DUB } from './e2e-helpers.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-run-m2m100-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const STAND_IN = fileURLToPath(new URL('../packages/translate/fixtures/m2m100-tiny-test/', import.meta.url));
const tools = ['ffmpeg', 'espeak-ng'].every((t) => spawnSync('sh', ['-c', `command -v ${t}`]).status === 0);

describe('dub run with the offline model installed', () => {
  it.skipIf(!tools)(`auto runs M2M100 for a pair apertium has no mode for, and the record names it${tools ? '' : ' [skipped: ffmpeg or espeak-ng missing]'}`, () => {
    const models = path.join(dir, 'models', 'm2m100-418m');
    fs.mkdirSync(models, { recursive: true });
    for (const f of fs.readdirSync(STAND_IN)) fs.copyFileSync(path.join(STAND_IN, f), path.join(models, f));
    const modes = path.join(dir, 'apertium', 'modes');
    fs.mkdirSync(modes, { recursive: true });
    for (const m of ['eng-spa', 'spa-eng_US']) fs.writeFileSync(path.join(modes, `${m}.mode`), '');
    const input = path.join(dir, 'in.mp4');
    const ff = spawnSync('ffmpeg', ['-loglevel', 'error', '-f', 'lavfi', '-i', 'sine=frequency=220:duration=4', '-f', 'lavfi', '-i', 'color=c=gray:s=160x120:d=4', '-shortest', '-c:v', 'libx264', '-c:a', 'aac', input]);
    expect(ff.status, String(ff.stderr)).toBe(0);
    const srt = path.join(dir, 'src.srt');
    fs.writeFileSync(srt, '1\n00:00:00,500 --> 00:00:02,500\nOpen the studio.\n');
    const out = path.join(dir, 'out');
    const env = { ...process.env, DUB_LOG_LEVEL: 'warn', DUB_MODELS_DIR: path.join(dir, 'models'), DUB_TRANSLATE_APERTIUM_DATA_DIR: path.join(dir, 'apertium') } as Record<string, string>;
    delete env.DUB_TRANSLATE_ENGINE;
    const r = spawnSync(process.execPath, [DUB, 'run', input, '--from', 'en-US', '--to', 'de-DE', '--source-srt', srt, '--tts-engine', 'espeak-ng', '--separation-engine', 'none', '-o', out, '--quiet'], { encoding: 'utf8', env, timeout: 240_000 });
    expect(r.status, r.stderr).toBe(0);
    const engines = JSON.parse(fs.readFileSync(path.join(out, 'de-DE', 'engines.json'), 'utf8')) as { translation: Record<string, unknown> };
    const decoder = fs.readFileSync(path.join(models, 'decoder_model_merged_quantized.onnx'));
    expect(engines.translation).toEqual({
      id: 'm2m100',
      label: 'M2M100 418M (q8, ONNX Runtime)',
      model: 'decoder_model_merged_quantized.onnx',
      sha256: crypto.createHash('sha256').update(decoder).digest('hex'),
      size: decoder.length,
      model_id: 'm2m100-418m',
      license: 'MIT',
      commercial: 'yes',
      selected: 'auto',
      reason: 'the offline default: apertium has no direct mode for the pair, the offline model M2M100 translates it',
    });
    expect(fs.readFileSync(path.join(out, 'de-DE', 'target.srt'), 'utf8')).toContain('Open the studio.');
  }, 300_000);
});
