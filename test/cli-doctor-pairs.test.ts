/**
 * A coverage table that cannot lie (issue 23 item 6): `dub doctor --pairs` says, for a sample of
 * pairs, what `dub run` then does with the same engine flags. A pair the table serves is dubbed
 * end to end from a short espeak-ng clip in its source language (one run for the served targets,
 * espeak-ng voices to keep it short), with the engines the table named; a pair it refuses is exit
 * 2 before any work, one line naming the table's stage, nothing written. The verdicts come from
 * whatever this host installed (apertium pair packages or not): the test compares, it does not
 * assume.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DUB } from './e2e-helpers.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-doctor-pairs-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

// the same flags for the table and the runs: they decide the engines (espeak-ng voices: short synthesis)
const FLAGS = ['--tts-engine', 'espeak-ng', '--separation-engine', 'none', '--voice-conversion', 'none', '--speaker-engine', 'mfcc'];
const ENV = { DUB_LOG_LEVEL: 'warn', DUB_ONNX_THREADS: '2', DUB_TRANSLATE_ENGINE: 'apertium' };

function dub(args: string[]) {
  return spawnSync(process.execPath, [DUB, ...args], { encoding: 'utf8', env: { ...process.env, ...ENV }, timeout: 300_000, maxBuffer: 64 << 20 });
}

/** A few seconds of speech in the source language, from espeak-ng, on a small grey picture. */
function clip(voice: string, text: string): string {
  const wav = path.join(dir, `${voice}.wav`);
  const mp4 = path.join(dir, `${voice}.mp4`);
  execFileSync('espeak-ng', ['-v', voice, '-s', '150', '-w', wav, text]);
  execFileSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'color=c=gray:size=160x120:rate=10:duration=4', '-i', wav, '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-preset', 'ultrafast', '-c:a', 'aac', '-shortest', mp4]);
  return mp4;
}

interface Row { source: string; target: string; served: boolean; asr?: string; translation?: string; tts?: string; stage?: string }

const apertium = ['/usr/bin/apertium', '/usr/local/bin/apertium'].some((f) => fs.existsSync(f));

describe('dub doctor names the Debian package a pair needs', () => {
  it.skipIf(!apertium)(`from the package table, one or two through Spanish; none where Debian has none${apertium ? '' : ' [skipped: apertium is not installed]'}`, () => {
    // a private data directory with eng-spa's modes only: what quickstart installed before the pair packages
    const data = path.join(dir, 'apertium');
    fs.mkdirSync(path.join(data, 'modes'), { recursive: true });
    for (const m of ['eng-spa', 'spa-eng', 'spa-eng_US']) fs.writeFileSync(path.join(data, 'modes', `${m}.mode`), '');
    const doctor = (from: string, to: string) => {
      const r = spawnSync(process.execPath, [DUB, 'doctor', '--from', from, '--to', to, '--json'], { encoding: 'utf8', env: { ...process.env, ...ENV, DUB_TRANSLATE_APERTIUM_DATA_DIR: data } });
      expect(r.status, r.stderr).toBe(1);
      return (JSON.parse(r.stdout) as { stages: { stage: string; ok: boolean; fix?: string }[] }).stages.find((x) => x.stage === 'translation')!;
    };
    expect(doctor('fr-FR', 'it-IT')).toMatchObject({ ok: false, fix: expect.stringMatching(/; to fix: apt-get install -y apertium-fr-es apertium-spa-ita \(Debian; apertium then runs fr-es then spa-ita, through Spanish/) });
    expect(doctor('hr-HR', 'en-US').fix).toMatch(/; to fix: apt-get install -y apertium-hbs-eng \(Debian; apertium then runs hbs-eng,/);
    expect(doctor('en-US', 'de-DE').fix).toMatch(/no Debian apertium package serves it .*; to fix: DUB_TRANSLATE_ENGINE_EN_DE=openai-compatible, deepl or libretranslate/);
  }, 60_000);
});

describe('dub doctor --pairs agrees with dub run', () => {
  it('the table covers the 1,370 pairs; served and refused samples behave as it says', () => {
    const t0 = Date.now();
    const doc = dub(['doctor', '--pairs', '--json', ...FLAGS]);
    expect(doc.status, doc.stderr).toBe(0);
    expect(Date.now() - t0).toBeLessThan(30_000); // from what is installed: no model is loaded
    const table = JSON.parse(doc.stdout) as { total: number; served: number; refused: number; rows: Row[] };
    expect(table.total).toBe(1370);
    expect(table.served + table.refused).toBe(1370);
    const row = (s: string, t: string) => table.rows.find((r) => r.source === s && r.target === t)!;

    // English source: es-ES is eng-spa (quickstart), pt-BR needs apertium-es-pt (through Spanish),
    // de-DE no Debian package; then sources whose translation or voice is refused here.
    const english = ['es-ES', 'pt-BR', 'de-DE'].map((t) => row('en-US', t));
    const refusedElsewhere = [row('hr-HR', 'es-ES'), row('ja-JP', 'fil-PH')];
    expect(english[0]!.served).toBe(true); // quickstart's eng-spa: the one pair every set-up host serves

    // refused: exit 2 before any work, the stage the table gave, nothing written
    for (const r of [...english, ...refusedElsewhere].filter((x) => !x.served)) {
      const out = path.join(dir, `refused-${r.source}-${r.target}`);
      const run = dub(['run', DUB, '--from', r.source, '--to', r.target, ...FLAGS, '--out', out]);
      expect(run.status, `${r.source} -> ${r.target}: ${run.stderr}`).toBe(2);
      const lines = run.stderr.trimEnd().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`${r.source} -> ${r.target} is not supported for its role (target) here: ${r.stage}: `);
      expect(fs.existsSync(out)).toBe(false);
    }

    // served: one dub of an English clip into every served target, with the engines the table named
    const served = english.filter((x) => x.served);
    const src = clip('en-us', 'Thank you very much for your help.');
    const out = path.join(dir, 'served');
    const run = dub(['run', src, '--from', 'en-US', '--to', served.map((r) => r.target).join(','), ...FLAGS, '--out', out]);
    expect(run.status, run.stderr.slice(-3000)).toBe(0);
    for (const r of served) {
      const d = path.join(out, r.target);
      expect(fs.statSync(path.join(d, 'dubbed.mp4')).size, r.target).toBeGreaterThan(1000);
      const engines = JSON.parse(fs.readFileSync(path.join(d, 'engines.json'), 'utf8')) as Record<string, { id: string }>;
      expect({ asr: engines['asr']?.id, translation: engines['translation']?.id, tts: engines['tts']?.id }, r.target).toEqual({ asr: r.asr, translation: r.translation, tts: r.tts });
      // the report measures each line by transcribing the dub back (Whisper)
      const report = JSON.parse(fs.readFileSync(path.join(d, 'report.json'), 'utf8')) as { segments: { back_transcription?: { engine: string; wer: number } }[] };
      expect(report.segments.length, r.target).toBeGreaterThan(0);
      for (const seg of report.segments) expect(seg.back_transcription).toMatchObject({ engine: 'whisper', wer: expect.any(Number) });
      const script = fs.readFileSync(path.join(d, 'target.srt'), 'utf8');
      expect(script, r.target).not.toMatch(/Thank you very much/); // translated, not passed through
    }
  }, 300_000);
});
