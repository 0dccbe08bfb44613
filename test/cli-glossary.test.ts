/**
 * `dub run --glossary FILE` on a short espeak-ng clip: the term kept as it is and the term with a
 * fixed translation are in the Spanish script and subtitles (real apertium), and the quality
 * report says per line which terms were applied. The transcript comes from --source-srt (Whisper
 * hears espeak-ng's made-up brand name differently every time; what is tested here is the
 * glossary, not the recognizer); espeak-ng speaks, chosen explicitly, to keep the run short.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DUB } from './e2e-helpers.js';
import { videoFromWav } from './prepare-helpers.js';

const hasApertium = spawnSync('sh', ['-c', 'command -v apertium']).status === 0;

describe.skipIf(!hasApertium)('dub run --glossary', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-cli-glossary-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('keeps the brand, writes the fixed translation, and the report lists both as applied', () => {
    const text = 'Vaultline makes dubbing simple.';
    const wav = path.join(dir, 'line.wav');
    execFileSync('espeak-ng', ['-v', 'en-us', '-w', wav, text]);
    const video = videoFromWav(wav, path.join(dir, 'line.mp4'));
    const srt = path.join(dir, 'source.srt');
    fs.writeFileSync(srt, `1\n00:00:00,100 --> 00:00:02,000\n${text}\n`);
    const glossary = path.join(dir, 'terms.txt');
    fs.writeFileSync(glossary, '# brand kept, product term fixed\nVaultline\ndubbing\tdoblaje\n');
    const out = path.join(dir, 'out');
    const r = spawnSync(process.execPath, [DUB, 'run', video, '--from', 'en-US', '--to', 'es-ES', '--source-srt', srt, '--glossary', glossary, '--tts-engine', 'espeak-ng', '--out', out], { encoding: 'utf8', env: { ...process.env, DUB_LOG_LEVEL: 'warn' }, timeout: 300_000 });
    expect(r.status, r.stderr).toBe(0);
    const script = JSON.parse(fs.readFileSync(path.join(out, 'es-ES', 'script.json'), 'utf8')) as { segments: { target_text: string }[] };
    const spoken = script.segments.map((s) => s.target_text).join(' ');
    expect(spoken).toContain('Vaultline');
    expect(spoken).toContain('doblaje');
    expect(fs.readFileSync(path.join(out, 'es-ES', 'target.srt'), 'utf8')).toContain('doblaje');
    const report = JSON.parse(fs.readFileSync(path.join(out, 'es-ES', 'report.json'), 'utf8')) as { segments: { glossary?: { term: string; applied: boolean }[] }[] };
    const terms = report.segments.flatMap((s) => s.glossary ?? []);
    expect(terms.map((t) => [t.term, t.applied]).sort()).toEqual([
      ['Vaultline', true],
      ['dubbing', true],
    ]);
  }, 320_000);
});
