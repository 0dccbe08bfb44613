/**
 * The README's main job: `dub run` dubs a video on this machine with the embedded defaults. Also
 * the CLI's answers to bad input (a clear message and a non-zero exit, nothing written).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseSrt } from '@dub/srt';
import { DUB, ffprobeJson, makeSample } from './e2e-helpers.js';
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-cli-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function dub(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [DUB, ...args], { encoding: 'utf8', env: { ...process.env, DUB_LOG_LEVEL: 'warn', ...env }, timeout: 400_000 });
}

describe('dub CLI', () => {
  it('lists its commands and refuses unknown ones', () => {
    const help = dub(['--help']);
    expect(help.status).toBe(0);
    for (const c of ['serve', 'worker', 'run', 'keys', 'models']) expect(help.stdout).toContain(c);
    const bad = dub(['frobnicate']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/unknown command "frobnicate"/);
  });

  it('dub models list names each model and whether it is present', () => {
    const r = dub(['models', 'list', '--json']);
    expect(r.status).toBe(0);
    const rows = JSON.parse(r.stdout) as { model: string; present: boolean }[];
    expect(rows.find((x) => x.model === 'silero-vad-v5')?.present).toBe(true);
    expect(rows.find((x) => x.model === 'htdemucs')?.present).toBe(true);
    expect(rows.find((x) => x.model === 'whisper-base')).toBeDefined();
    expect(dub(['models', 'list', 'no-such-model']).status).not.toBe(0);
  });

  it('dub run answers bad input with a clear error and writes nothing', () => {
    const out = path.join(dir, 'bad-out');
    const cases: [string[], RegExp][] = [
      [['--input', path.join(dir, 'missing.mp4'), '--from', 'en-US', '--to', 'es-ES'], /does not exist/],
      [['--input', DUB, '--from', 'th-TH', '--to', 'es-ES'], /not a supported source locale/],
      [['--input', DUB, '--from', 'en-US', '--to', 'he-IL'], /not a supported target locale/],
      [['--input', DUB, '--from', 'en-US', '--to', 'es-ES', '--voice-over'], /voice_over_library_required/],
      [['--input', DUB, '--from', 'en-US', '--to', 'es-ES', '--speakers', '0'], /--speakers must be a whole number >= 1/],
      [['--input', DUB, '--from', 'en-US', '--to', 'es-ES', '--anonymize', '2'], /--anonymize must be a number >= 0 <= 1/],
    ];
    for (const [args, msg] of cases) {
      const r = dub(['run', ...args, '--out', out]);
      expect(r.status, args.join(' ')).not.toBe(0);
      expect(r.stderr).toMatch(msg);
    }
    expect(fs.existsSync(out)).toBe(false);
    expect(dub(['run']).status).toBe(2);
  });

  it('dub run fails a file that is not a video with unsupported_media', () => {
    const notVideo = path.join(dir, 'notes.mp4');
    fs.writeFileSync(notVideo, 'this is text, not a video');
    const r = dub(['run', '--input', notVideo, '--from', 'en-US', '--to', 'es-ES', '--out', path.join(dir, 'nv')]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/unsupported_media/);
  });

  it('dub run dubs the sample video into Spanish: video, audio track, script and subtitles', () => {
    const video = makeSample(path.join(dir, 'sample.mp4'));
    const out = path.join(dir, 'out');
    const r = dub(['run', '--input', video, '--from', 'en-US', '--to', 'es-ES', '--out', out, '--srt-profile', 'global_regular']);
    expect(r.status, r.stderr.slice(-2000)).toBe(0);
    const es = path.join(out, 'es-ES');
    const probe = ffprobeJson;
    const src = probe(video);
    const res = probe(path.join(es, 'dubbed.mp4'));
    expect(res.streams.map((s) => s.codec_type).sort()).toEqual(['audio', 'video']);
    expect(Math.abs(Number(res.format.duration) - Number(src.format.duration))).toBeLessThan(0.2);
    expect(probe(path.join(es, 'dubbed.m4a')).streams.map((s) => s.codec_type)).toEqual(['audio']);
    const target = parseSrt(fs.readFileSync(path.join(es, 'target.srt'), 'utf8'));
    const source = parseSrt(fs.readFileSync(path.join(es, 'source.srt'), 'utf8'));
    expect(target.length).toBeGreaterThan(0);
    expect(source.length).toBeGreaterThan(0);
    const script = JSON.parse(fs.readFileSync(path.join(es, 'script.json'), 'utf8')) as { target_locale: string; segments: { target_text: string }[] };
    expect(script.target_locale).toBe('es-ES');
    expect(script.segments.some((s) => s.target_text.trim().length > 0)).toBe(true);
    // The sample has two voices (espeak-ng male and female).
    const transcript = JSON.parse(fs.readFileSync(path.join(out, 'transcript.json'), 'utf8')) as { speakers: unknown[] };
    expect(transcript.speakers).toHaveLength(2);
  }, 420_000);
});
