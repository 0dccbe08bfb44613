// The fit of dubbed lines (issue 26): real English recordings of ../shared/media dubbed into
// es-ES with the offline engines (`dub run`, auto: Kokoro where installed), in four settings:
//   before: every voice at the engine's default rate (DUB_SPEAKER_PACE=off), lines placed one by one
//           (DUB_PLACEMENT_TURNS=off);
//   pace:   each speaker's lines at their articulation rate, lines placed one by one;
//   turns:  at the speaker's pace, placed by turns, no condensing (DUB_SHORTEN_CONDENSE=off);
//   condensed: as turns, and where the pair's engine gives no shorter line (apertium) the source
//           line condensed and translated again (condense.ts; the default).
// Per recording and setting: lines, share in slot (no time past the slot), share placed without
// force (fits, the silence after, or borrowed in its turn), speed flags, speed-factor and rate-ratio percentiles, share
// with rate_ratio <= 1.25, lines above 1.6, share ending within their turn plus the silence after
// it (`in_turn`: the line ends by the next other speaker's line's start or the end of the video;
// turns are a speaker's lines less than 0.3 s apart, the report's own when it has them), and the
// issue's target: share with both (`ok`), and lines placed over another speaker's speech; from
// the per-line `synthesis`: engine calls for the lines (passes, plus the speed-1 pass of a measured
// line; shortening's candidates not counted), second passes, predicted lines, |tempo - 1| p50/p90/max.
// Settings old,once,response: speaking each line once, and Kokoro's speed response (below).
//
// Usage (after `npm run build`): node bench/fit.mjs [--media DIR] [--only a,b] [--work DIR]
//   [--settings before,pace,turns,condensed] [--recordings FILE,...]
//   Recordings without video are wrapped in a grey 320x240 video (ffmpeg) under the work folder.
//   Before and after share a --data-dir per recording, so the transcript is made once.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { printMarkdownTable } from './lib/table.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { media: { type: 'string', default: path.resolve(root, '../shared/media') }, only: { type: 'string' }, work: { type: 'string', default: path.join(os.tmpdir(), 'dub-bench-fit') }, settings: { type: 'string', default: 'turns,condensed' }, recordings: { type: 'string' } } });
const RECORDINGS = values.recordings ? values.recordings.split(',') : ['jfk.wav', 'two-speakers-call.wav', 'voice-ref-a.mp3', 'voice-ref-b.mp3', 'talking-head-480.mp4'];
const SETTINGS = {
  before: { DUB_SPEAKER_PACE: 'off', DUB_PLACEMENT_TURNS: 'off', DUB_SHORTEN_CONDENSE: 'off' },
  pace: { DUB_SPEAKER_PACE: 'on', DUB_PLACEMENT_TURNS: 'off', DUB_SHORTEN_CONDENSE: 'off' },
  turns: { DUB_SPEAKER_PACE: 'on', DUB_PLACEMENT_TURNS: 'on', DUB_SHORTEN_CONDENSE: 'off' },
  condensed: { DUB_SPEAKER_PACE: 'on', DUB_PLACEMENT_TURNS: 'on', DUB_SHORTEN_CONDENSE: 'on' },
  // speaking each line once (generate-predict.ts), as condensed: old = every line at speed 1 then at
  // its fitted speed; once = one pass a line, lengths to speeds as 1/speed (as at 31109aa);
  // response = one pass, Kokoro's measured response to its speed (KOKORO_SPEED_RESPONSE, the default)
  old: { DUB_SPEAKER_PACE: 'on', DUB_PLACEMENT_TURNS: 'on', DUB_SHORTEN_CONDENSE: 'on', DUB_SYNTH_PREDICT: 'off', DUB_SPEED_RESPONSE: 'off' },
  once: { DUB_SPEAKER_PACE: 'on', DUB_PLACEMENT_TURNS: 'on', DUB_SHORTEN_CONDENSE: 'on', DUB_SYNTH_PREDICT: 'on', DUB_SPEED_RESPONSE: 'off' },
  response: { DUB_SPEAKER_PACE: 'on', DUB_PLACEMENT_TURNS: 'on', DUB_SHORTEN_CONDENSE: 'on', DUB_SYNTH_PREDICT: 'on', DUB_SPEED_RESPONSE: 'on' },
  // the names of the earlier table (before/after the speaker's pace)
  after: { DUB_SPEAKER_PACE: 'on', DUB_PLACEMENT_TURNS: 'off', DUB_SHORTEN_CONDENSE: 'off' },
};
/** Lines of one speaker less than this apart form a turn (the issue's short pause; TURN_DEFAULTS.pause). */
const TURN_PAUSE = 0.3;
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

/**
 * Per line: the end of its turn's room (the next other speaker's line's start, else the end of the
 * video) and whether its placed span overlaps another speaker's source speech.
 */
function turnFacts(report) {
  const segs = [...report.segments].sort((a, b) => a.slot.start - b.slot.start || a.slot.end - b.slot.end);
  const end = report.durations?.source?.container ?? Math.max(...segs.map((s) => s.slot.end));
  const turnOf = new Map();
  let turn = 0;
  for (const [i, s] of segs.entries()) {
    const prev = segs[i - 1];
    if (s.turn?.id !== undefined) turnOf.set(s.id, s.turn.id);
    else {
      if (!prev || prev.speaker !== s.speaker || s.slot.start - prev.slot.end >= TURN_PAUSE - 1e-6) turn++;
      turnOf.set(s.id, turn);
    }
  }
  const out = new Map();
  for (const s of segs) {
    const t = turnOf.get(s.id);
    const mine = segs.filter((o) => turnOf.get(o.id) === t);
    const lastEnd = Math.max(...mine.map((o) => o.slot.end));
    const next = segs.find((o) => o.speaker !== s.speaker && o.slot.start >= lastEnd - 1e-6);
    const roomEnd = next ? next.slot.start : end;
    const overOther = segs.some((o) => o.speaker !== s.speaker && Math.min(o.slot.end, s.placed.end) - Math.max(o.slot.start, s.placed.start) > 0.001 && !(Math.min(o.slot.end, s.slot.end) - Math.max(o.slot.start, s.slot.start) > 0));
    out.set(s.id, { inTurn: s.placed.end <= roomEnd + 0.001, overOther });
  }
  return out;
}

const rows = [];
for (const file of recordings) {
  const name = path.parse(file).name;
  const src = input(file);
  for (const setting of values.settings.split(',')) {
    const out = path.join(values.work, setting, name);
    const t0 = Date.now();
    const r = spawnSync(process.execPath, [path.join(root, 'packages/cli/bin/dub.js'), 'run', src, '--from', 'en-US', '--to', 'es-ES', '-o', out, '--data-dir', path.join(values.work, 'data', name), '-q'], {
      env: { ...process.env, ...SETTINGS[setting] },
      encoding: 'utf8',
    });
    if (r.status !== 0) {
      console.log(`${name} ${setting}: dub run exited ${r.status}: ${r.stderr.slice(-500)}`);
      continue;
    }
    const report = JSON.parse(fs.readFileSync(path.join(out, 'es-ES', 'report.json'), 'utf8'));
    const segs = report.segments;
    const ratios = segs.map((s) => s.rate_ratio).filter((x) => typeof x === 'number');
    const facts = turnFacts(report);
    // per line how it was spoken (absent in older reports): its engine calls are its passes, and one at speed 1 when measured
    const syn = segs.map((s) => s.synthesis).filter(Boolean);
    const stretch = syn.map((x) => Math.abs(x.tempo - 1));
    rows.push({
      recording: name,
      setting,
      seconds: ((Date.now() - t0) / 1000).toFixed(0),
      tts: report.engines.tts?.label ?? '?',
      lines: segs.length,
      in_slot: pct(segs.filter((s) => s.overflow_ms === 0).length, segs.length),
      unforced: pct(segs.filter((s) => ['fits', 'used_gap_after', 'borrowed'].includes(s.resolution)).length, segs.length),
      speed_flags: segs.filter((s) => s.flags.includes('speed')).length,
      speed_p50: f2(q(segs.map((s) => s.speed_factor), 0.5)),
      speed_p90: f2(q(segs.map((s) => s.speed_factor), 0.9)),
      ratio_p50: f2(q(ratios, 0.5)),
      ratio_p90: f2(q(ratios, 0.9)),
      ratio_max: f2(ratios.length ? Math.max(...ratios) : NaN),
      'ratio<=1.25': pct(ratios.filter((x) => x <= 1.25).length, ratios.length),
      'ratio>1.6': ratios.filter((x) => x > 1.6).length,
      line_calls: syn.length ? syn.reduce((a, x) => a + x.passes + (x.natural === 'measured' ? 1 : 0), 0) : '-',
      second_passes: syn.filter((x) => x.passes === 2).length,
      predicted: syn.filter((x) => x.natural === 'predicted').length,
      stretch_p50: syn.length ? q(stretch, 0.5).toFixed(3) : '-',
      stretch_p90: syn.length ? q(stretch, 0.9).toFixed(3) : '-',
      stretch_max: syn.length ? Math.max(...stretch).toFixed(3) : '-',
      in_turn: pct(segs.filter((s) => facts.get(s.id).inTurn).length, segs.length),
      ok: `${segs.filter((s) => facts.get(s.id).inTurn && typeof s.rate_ratio === 'number' && s.rate_ratio <= 1.25).length}/${segs.length}`,
      over_other: segs.filter((s) => facts.get(s.id).overOther).length,
      turns: new Set(segs.map((s) => s.turn?.id).filter((x) => x !== undefined)).size || '-',
      shortened: segs.filter((s) => s.shortening?.applied).length,
      mt: report.engines.translate?.label ?? report.engines.translation?.label ?? '?',
      pace: report.speakers.found.map((f) => `${f.id}:${f.articulation ? `${f2(f.articulation.rate)}/${f2(f.articulation.voice_rate)}->${f.articulation.pace}` : '?'}`).join(' '),
    });
    console.log(JSON.stringify(rows.at(-1)));
  }
}
printMarkdownTable(rows);
