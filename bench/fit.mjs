// The fit of dubbed lines (issue 26): real English recordings of ../shared/media dubbed into
// es-ES with the offline engines (`dub run`, auto: Kokoro where installed), before (every voice at
// the engine's default rate: DUB_SPEAKER_PACE=off) and after (each speaker's lines at their
// articulation rate). Per recording and setting: lines, share in slot (no time past the slot),
// share placed without force (fits or the silence after), speed flags, speed-factor and
// rate-ratio percentiles, share with rate_ratio <= 1.25 and lines above 1.6.
//
// Usage (after `npm run build`): node bench/fit.mjs [--media DIR] [--only a,b] [--work DIR]
//   Recordings without video are wrapped in a grey 320x240 video (ffmpeg) under the work folder.
//   Before and after share a --data-dir per recording, so the transcript is made once.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { media: { type: 'string', default: path.resolve(root, '../shared/media') }, only: { type: 'string' }, work: { type: 'string', default: path.join(os.tmpdir(), 'dub-bench-fit') }, settings: { type: 'string', default: 'before,after' } } });
const RECORDINGS = ['jfk.wav', 'two-speakers-call.wav', 'voice-ref-a.mp3', 'voice-ref-b.mp3', 'talking-head-480.mp4'];
if (!fs.existsSync(values.media)) {
  console.log(`skipped: ${values.media} is absent (the real recordings, see its README)`);
  process.exit(0);
}
const only = values.only ? values.only.split(',') : undefined;
const recordings = RECORDINGS.filter((f) => !only || only.some((o) => f.startsWith(o)));
fs.mkdirSync(values.work, { recursive: true });

function input(file) {
  const src = path.join(values.media, file);
  if (file.endsWith('.mp4')) return src;
  const out = path.join(values.work, `${path.parse(file).name}.mp4`);
  if (!fs.existsSync(out)) {
    const r = spawnSync('ffmpeg', ['-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'color=c=gray:s=320x240:r=25', '-i', src, '-shortest', '-c:v', 'libx264', '-preset', 'ultrafast', '-c:a', 'aac', out]);
    if (r.status !== 0) throw new Error(`ffmpeg failed on ${file}: ${r.stderr}`);
  }
  return out;
}

const q = (xs, p) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * (s.length - 1) + 0.5))];
};
const f2 = (x) => (Number.isFinite(x) ? x.toFixed(2) : 'n/a');
const pct = (n, d) => (d ? `${Math.round((100 * n) / d)}%` : 'n/a');

const rows = [];
for (const file of recordings) {
  const name = path.parse(file).name;
  const src = input(file);
  for (const setting of values.settings.split(',')) {
    const out = path.join(values.work, setting, name);
    const t0 = Date.now();
    const r = spawnSync(process.execPath, [path.join(root, 'packages/cli/bin/dub.js'), 'run', src, '--from', 'en-US', '--to', 'es-ES', '-o', out, '--data-dir', path.join(values.work, 'data', name), '-q'], {
      env: { ...process.env, DUB_SPEAKER_PACE: setting === 'before' ? 'off' : 'on' },
      encoding: 'utf8',
    });
    if (r.status !== 0) {
      console.log(`${name} ${setting}: dub run exited ${r.status}: ${r.stderr.slice(-500)}`);
      continue;
    }
    const report = JSON.parse(fs.readFileSync(path.join(out, 'es-ES', 'report.json'), 'utf8'));
    const segs = report.segments;
    const ratios = segs.map((s) => s.rate_ratio).filter((x) => typeof x === 'number');
    rows.push({
      recording: name,
      setting,
      seconds: ((Date.now() - t0) / 1000).toFixed(0),
      tts: report.engines.tts?.label ?? '?',
      lines: segs.length,
      in_slot: pct(segs.filter((s) => s.overflow_ms === 0).length, segs.length),
      unforced: pct(segs.filter((s) => s.resolution === 'fits' || s.resolution === 'used_gap_after').length, segs.length),
      speed_flags: segs.filter((s) => s.flags.includes('speed')).length,
      speed_p50: f2(q(segs.map((s) => s.speed_factor), 0.5)),
      speed_p90: f2(q(segs.map((s) => s.speed_factor), 0.9)),
      ratio_p50: f2(q(ratios, 0.5)),
      ratio_p90: f2(q(ratios, 0.9)),
      ratio_max: f2(ratios.length ? Math.max(...ratios) : NaN),
      'ratio<=1.25': pct(ratios.filter((x) => x <= 1.25).length, ratios.length),
      'ratio>1.6': ratios.filter((x) => x > 1.6).length,
      pace: report.speakers.found.map((f) => `${f.id}:${f.articulation ? `${f2(f.articulation.rate)}/${f2(f.articulation.voice_rate)}->${f.articulation.pace}` : '?'}`).join(' '),
    });
    console.log(JSON.stringify(rows.at(-1)));
  }
}
console.log('');
const cols = Object.keys(rows[0] ?? {});
console.log(`| ${cols.join(' | ')} |`);
console.log(`|${cols.map(() => '---').join('|')}|`);
for (const r of rows) console.log(`| ${cols.map((c) => r[c]).join(' | ')} |`);
