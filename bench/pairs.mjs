// Language pairs end to end, offline, from real speech in each source language: for every source
// locale with a real recording here, one `dub run --from SRC --to <every other locale of the set>`
// (the product's path: one process, one source analysis, one dub per target), then per target the
// exit status, the engines that ran (engines.json) and the quality report's back-transcription
// word error rate (Whisper decoding each dubbed line in the target language): median over the
// lines, and lines measured; and two counts of what Whisper made up rather than heard: lines whose
// WER is over 1 (more words inserted than the line has) and lines left unmeasured because a
// repetition loop reached into them (one phrase again and again at every temperature tried). Issue 23's set: en-US, es-ES, es-MX, pt-BR, pt-PT, fr-FR, it-IT, and
// ro-RO as a source.
//
// Real recordings (nothing made by a synthesizer; none were used to tune anything):
//   en-US  ../shared/media/jfk.wav (JFK's inaugural address, 11 s)
//   es-ES, es-MX  ../shared/media/spanish-prompt.wav (Debian asterisk-core-sounds-es-wav, a Mexican
//          Spanish speaker; the same recording as the source of both Spanish locales)
//   fr-FR  Debian asterisk-core-sounds-fr-wav (fr_CA_f_June: a Canadian French speaker; CC-BY-SA-3.0)
//   it-IT  Debian asterisk-core-sounds-it-wav (it_IT_m_Carlo; CC-BY-SA-3.0)
//   pt-BR, pt-PT  packages/asr/fixtures/held-out/fleurs-pt-001.ogg: one FLEURS sentence (Google,
//          CC-BY-4.0; 13.6 s), a Brazilian Portuguese speaker reading Wikipedia (its README gives
//          the source). No European Portuguese recording is had here: the pt-PT source is the same
//          Brazilian speech, said so in the recordings list.
//   ro-RO: no real recording is available on this machine (no Debian package ships Romanian
//          speech); listed as not measured.
// The recordings are read from $DUB_TEST_MEDIA (default ../shared/media), as the tests read them.
// The asterisk prompts are short phrases: the first files by name that last 1.5 s or more are
// joined with 0.6 s pauses up to --seconds. Each source becomes an MP4 (a grey 320x240 picture, the speech
// as AAC) made by ffmpeg, as a user's upload would be.
//
// Usage (after `npm run build`): node bench/pairs.mjs [--seconds 12] [--sources en-US,es-ES,...]
//   [--targets ...] [--keep DIR] [--json FILE]
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { ROOT, MEDIA, ffmpeg } from './lib/clips.mjs';

const DUB = path.join(ROOT, 'packages', 'cli', 'bin', 'dub.js');
const SET = ['en-US', 'es-ES', 'es-MX', 'pt-BR', 'pt-PT', 'fr-FR', 'it-IT'];
const SOURCES = [...SET, 'ro-RO'];
const ASTERISK = '/usr/share/asterisk/sounds';

const media = process.env.DUB_TEST_MEDIA ? path.resolve(process.env.DUB_TEST_MEDIA) : MEDIA;
const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '12' },
    sources: { type: 'string' },
    targets: { type: 'string' },
    keep: { type: 'string' },
    json: { type: 'string' },
  },
});
const seconds = Number(values.seconds);
if (!(seconds > 2)) throw new Error(`--seconds must be over 2, got ${values.seconds}`);
const sources = values.sources ? values.sources.split(',') : SOURCES;
const targetsOf = (src) => (values.targets ? values.targets.split(',') : SET).filter((t) => t !== src);
const dir = values.keep ? path.resolve(values.keep) : fs.mkdtempSync(path.join(os.tmpdir(), 'dub-bench-pairs-'));
fs.mkdirSync(dir, { recursive: true });

/** Seconds of an audio file (ffprobe). */
function durationOf(file) {
  const r = spawnSync('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', file], { encoding: 'utf8' });
  return Number(r.stdout.trim());
}

/** The recording of a source locale: { files, note } or { missing: reason }. */
function recordingOf(locale) {
  const shared = (name) => (fs.existsSync(path.join(media, name)) ? { files: [path.join(media, name)], note: `${media}/${name}` } : { missing: `${media} lacks ${name}` });
  const asterisk = (voice, pkg) => {
    const d = path.join(ASTERISK, voice);
    if (!fs.existsSync(d)) return { missing: `${d} is absent (apt-get install ${pkg})` };
    const files = [];
    let total = 0;
    for (const f of fs.readdirSync(d).filter((n) => n.endsWith('.wav')).sort()) {
      const s = durationOf(path.join(d, f));
      if (!(s >= 1.5)) continue;
      files.push(path.join(d, f));
      total += s + 0.6;
      if (total >= seconds) break;
    }
    return { files, note: `${pkg} ${voice}: ${files.length} prompts` };
  };
  const fleurs = (name, speaker) => ({ files: [path.join(ROOT, 'packages', 'asr', 'fixtures', 'held-out', name)], note: `packages/asr/fixtures/held-out/${name} (FLEURS, ${speaker})` });
  switch (locale) {
    case 'en-US': return shared('jfk.wav');
    case 'es-ES': case 'es-MX': return shared('spanish-prompt.wav');
    case 'fr-FR': return asterisk('fr_CA_f_June', 'asterisk-core-sounds-fr-wav');
    case 'it-IT': return asterisk('it_IT_m_Carlo', 'asterisk-core-sounds-it-wav');
    case 'pt-BR': return fleurs('fleurs-pt-001.ogg', 'a Brazilian speaker');
    case 'pt-PT': return fleurs('fleurs-pt-001.ogg', 'a Brazilian speaker: no European Portuguese recording here');
    default: return { missing: 'no real recording in this language on this machine' };
  }
}

/** An MP4 of the recording's first `seconds`: grey picture, the files joined with 0.6 s pauses. */
function makeClip(locale, rec) {
  const out = path.join(dir, `${locale}.mp4`);
  if (fs.existsSync(out)) return out;
  const inputs = [];
  const parts = [];
  rec.files.forEach((f, i) => {
    inputs.push('-i', f);
    parts.push(`[${i}:a]aresample=48000,aformat=channel_layouts=mono,apad=pad_dur=0.6[a${i}]`);
  });
  const concat = `${parts.join(';')};${rec.files.map((_, i) => `[a${i}]`).join('')}concat=n=${rec.files.length}:v=0:a=1[a]`;
  ffmpeg([...inputs, '-f', 'lavfi', '-i', 'color=c=gray:s=320x240:r=25', '-filter_complex', concat, '-map', `${rec.files.length}:v`, '-map', '[a]', '-t', String(seconds), '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '128k', out]);
  return out;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? null : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const rows = [];
for (const src of sources) {
  const rec = recordingOf(src);
  const targets = targetsOf(src);
  if (rec.missing) {
    for (const t of targets) rows.push({ source: src, target: t, status: 'not measured', reason: rec.missing });
    continue;
  }
  const clip = makeClip(src, rec);
  const out = path.join(dir, `out-${src}`);
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [DUB, 'run', clip, '--from', src, '--to', targets.join(','), '-o', out, '--log-format', 'json'], { encoding: 'utf8', maxBuffer: 1 << 28 });
  const wall = (performance.now() - t0) / 1000;
  console.error(`${src}: dub run exit ${r.status} in ${wall.toFixed(1)} s (${rec.note})`);
  if (r.status !== 0) console.error(r.stderr.split('\n').filter((l) => /error|fail/i.test(l)).slice(-5).join('\n'));
  for (const t of targets) {
    const reportFile = path.join(out, t, 'report.json');
    if (!fs.existsSync(reportFile)) {
      rows.push({ source: src, target: t, status: `failed (exit ${r.status})`, reason: 'no report.json' });
      continue;
    }
    const report = JSON.parse(fs.readFileSync(reportFile, 'utf8'));
    const engines = JSON.parse(fs.readFileSync(path.join(out, t, 'engines.json'), 'utf8'));
    const wers = report.segments.map((s) => s.back_transcription?.wer).filter((w) => typeof w === 'number');
    const loops = report.segments.filter((s) => s.back_transcription?.wer === null && /repetition loop/.test(s.back_transcription.reason ?? '')).length;
    rows.push({
      source: src,
      target: t,
      status: 'dubbed',
      recording: rec.note,
      asr: engines.asr?.id ?? null,
      translation: engines.translation?.id ?? null,
      tts: engines.tts?.id ?? null,
      back_asr: report.segments.find((s) => s.back_transcription?.engine)?.back_transcription.engine ?? null,
      lines: report.segments.length,
      lines_measured: wers.length,
      wer_median: median(wers),
      wer_over_1: wers.filter((w) => w > 1).length,
      loops,
      wall_s: Number(wall.toFixed(1)),
    });
  }
}

const fmt = (v) => (v === null || v === undefined ? '-' : typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toFixed(2)) : String(v));
console.log(`| source | target | status | ASR | translation | TTS | lines | WER measured | back-transcription WER, median | WER > 1 | loops |`);
console.log(`|---|---|---|---|---|---|---|---|---|---|---|`);
for (const r of rows) {
  console.log(`| ${r.source} | ${r.target} | ${r.status}${r.reason ? `: ${r.reason}` : ''} | ${fmt(r.asr)} | ${fmt(r.translation)} | ${fmt(r.tts)} | ${fmt(r.lines)} | ${fmt(r.lines_measured)} | ${fmt(r.wer_median)} | ${fmt(r.wer_over_1)} | ${fmt(r.loops)} |`);
}
const dubbed = rows.filter((r) => r.status === 'dubbed');
const withWer = dubbed.filter((r) => r.wer_median !== null);
console.log(`\n${dubbed.length} of ${rows.length} pairs dubbed end to end; ${withWer.length} with a back-transcription WER; median of the pairs' medians ${fmt(median(withWer.map((r) => r.wer_median)))}; ${rows.filter((r) => r.status === 'not measured').length} not measured (no recording)`);
console.log('\nrecordings:');
for (const src of sources) {
  const rec = recordingOf(src);
  console.log(`- ${src}: ${rec.missing ? `none (${rec.missing})` : rec.note}`);
}
if (values.json) fs.writeFileSync(values.json, JSON.stringify(rows, null, 2));
