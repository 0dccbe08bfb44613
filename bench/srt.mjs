// @dub/srt throughput: subtitle formatting (words per second) for the four profiles on a
// generated ~100k-word transcript, and SRT parse/serialize of a large file.
// Peers, measured in the same run: no SRT library is installed (subsrt-ts is not), so the peers
// are written here as baselines: a greedy line filler (no line balancing, no natural break points,
// no reading-speed handling, code-unit counting) for formatting, a regex-based non-validating
// parser and a template-string serializer for SRT I/O.
// Run after `npm run build` (or `npx tsc -b packages/srt`): node bench/srt.mjs
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { formatSubtitles, parseSrt, readSrt, serializeSrt, SRT_PROFILE_LIMITS, SRT_PROFILE_NAMES } from '@dub/srt';

const WORDS = Number(process.env.BENCH_SRT_WORDS ?? 100_000);
const RUNS = 3;

// ------------------------------------------------------------------ data (deterministic)
let seed = 42;
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const LATIN = 'the of and to in is you that it he was for on are as with his they at be this from have or by one had not but what all were when we there can an your which their said if do will each about how up out them then she many some so these would other into has more her two like him see time could no make than first been its who now people my made over did down only way find use may water long little very after words called just where most know'.split(' ');
const HAN = Array.from('的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长知民样现分将外但身些与高意进');

function latinTranscript(n) {
  const segs = [];
  let t = 0.5;
  for (let w = 0; w < n; ) {
    const len = 4 + Math.floor(rand() * 24);
    const words = [];
    for (let k = 0; k < len && w < n; k++, w++) {
      let text = LATIN[Math.floor(rand() * LATIN.length)];
      if (k === 0) text = text[0].toUpperCase() + text.slice(1);
      const r = rand();
      if (k === len - 1) text += r < 0.8 ? '.' : '?';
      else if (r < 0.07) text += ',';
      const d = text.length * 0.07 + rand() * 0.1;
      words.push({ text, start: t, end: t + d });
      t += d + 0.05 + rand() * 0.15;
    }
    segs.push({ start: words[0].start, end: words.at(-1).end, text: words.map((x) => x.text).join(' '), words, speaker: rand() < 0.5 ? 'A' : 'B' });
    t += 0.3 + rand() * 1.5;
  }
  return segs;
}

/** CJK text without word timings (Intl.Segmenter tokenization, estimated timings). */
function cjkTranscript(n) {
  const segs = [];
  let t = 0.5;
  for (let w = 0; w < n; ) {
    const len = 6 + Math.floor(rand() * 20);
    let text = '';
    let chars = 0;
    for (let k = 0; k < len && w < n; k++, w++) {
      const wl = 1 + Math.floor(rand() * 3);
      for (let c = 0; c < wl; c++) text += HAN[Math.floor(rand() * HAN.length)];
      chars += wl;
      if (k === len - 1) text += '。';
      else if (rand() < 0.1) text += '，';
    }
    const d = chars * 0.2;
    segs.push({ start: t, end: t + d, text });
    t += d + 0.4 + rand();
  }
  return segs;
}

// ------------------------------------------------------------------ peers written here
/** Greedy baseline: fill each segment's words into lines and two-line blocks, code-unit counting. */
function greedyFormat(segs, limits) {
  const cues = [];
  for (const s of segs) {
    const words = s.words ?? s.text.split(/\s+/).filter(Boolean).map((text) => ({ text, start: s.start, end: s.end }));
    let lines = [''];
    let first = 0;
    let chars = 0;
    const flush = (k) => {
      if (lines[0] === '') return;
      cues.push({ index: cues.length + 1, start: words[first].start, end: words[k - 1].end, text: lines.join('\n') });
      lines = [''];
      chars = 0;
      first = k;
    };
    words.forEach((w, k) => {
      const cur = lines[lines.length - 1];
      const add = cur === '' ? w.text.length : cur.length + 1 + w.text.length;
      if (add <= limits.maxLineChars && chars + w.text.length + (cur === '' ? 0 : 1) <= limits.maxBlockChars) {
        chars += w.text.length + (cur === '' ? 0 : 1);
        lines[lines.length - 1] = cur === '' ? w.text : `${cur} ${w.text}`;
      } else if (lines.length < 2 && chars + w.text.length <= limits.maxBlockChars) {
        lines.push(w.text);
        chars += w.text.length;
      } else {
        flush(k);
        lines = [w.text];
        chars = w.text.length;
      }
    });
    flush(words.length);
  }
  return cues;
}

const CUE_RE = /^(\d+)\r?\n(\d{2}):(\d{2}):(\d{2})[,.](\d{3}) --> (\d{2}):(\d{2}):(\d{2})[,.](\d{3})\r?\n([\s\S]*)$/;
/** Regex baseline: split on blank lines, one regex per cue, no validation beyond the match. */
function regexParse(text) {
  const out = [];
  for (const block of text.replace(/^\uFEFF/, '').trim().split(/\r?\n\r?\n+/)) {
    const m = CUE_RE.exec(block);
    if (!m) continue;
    const t = (h, mi, s, ms) => Number(h) * 3600 + Number(mi) * 60 + Number(s) + Number(ms) / 1000;
    out.push({ index: Number(m[1]), start: t(m[2], m[3], m[4], m[5]), end: t(m[6], m[7], m[8], m[9]), text: m[10].replace(/\r?\n$/, '').replace(/\r\n/g, '\n') });
  }
  return out;
}

const pad = (n, w) => String(n).padStart(w, '0');
const ts = (sec) => {
  const ms = Math.round(sec * 1000);
  return `${pad(Math.floor(ms / 3600000), 2)}:${pad(Math.floor(ms / 60000) % 60, 2)}:${pad(Math.floor(ms / 1000) % 60, 2)},${pad(ms % 1000, 3)}`;
};
/** Template-string baseline serializer (no validation, no text normalization). */
function templateSerialize(cues) {
  return cues.map((c, i) => `${i + 1}\n${ts(c.start)} --> ${ts(c.end)}\n${c.text}\n`).join('\n');
}

// ------------------------------------------------------------------ measure
function time(fn, runs = RUNS) {
  let best = Infinity;
  let result;
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    result = fn();
    best = Math.min(best, performance.now() - t0);
  }
  return { ms: best, result };
}

const latin = latinTranscript(WORDS);
const cjk = cjkTranscript(WORDS);
const rows = [];
for (const [name, segs] of [['Latin, word timings', latin], ['CJK text, no word timings', cjk]]) {
  for (const profile of SRT_PROFILE_NAMES) {
    const ours = time(() => formatSubtitles(segs, profile, name.startsWith('CJK') ? { locale: 'zh-CN' } : { locale: 'en-US' }));
    const peer = name.startsWith('CJK') ? undefined : time(() => greedyFormat(segs, SRT_PROFILE_LIMITS[profile]));
    rows.push({ name, profile, ours, peer });
  }
}

// A large file: the regular cues of the transcript, five times over (about 50k cues).
const once = formatSubtitles(latin, 'regular');
const span = once.at(-1).end + 10;
const cues = [0, 1, 2, 3, 4].flatMap((k) => once.map((c) => ({ ...c, start: c.start + k * span, end: c.end + k * span })));
const big = serializeSrt(cues);
const bigCrlf = serializeSrt(cues, { eol: '\r\n' });
const oursParse = time(() => parseSrt(big));
const peerParse = time(() => regexParse(big));
const oursParseCrlf = time(() => parseSrt(bigCrlf));
const peerParseCrlf = time(() => regexParse(bigCrlf));
// The tolerant input reader (ffmpeg's reading, notes), on the text and on the file's bytes (UTF-8 check + decode).
const oursRead = time(() => readSrt(big));
const oursReadBytes = time(() => readSrt(Buffer.from(bigCrlf, 'utf8')));
if (oursRead.result.cues.length !== cues.length || oursReadBytes.result.cues.length !== cues.length) throw new Error('readSrt cue count mismatch');
const oursSer = time(() => serializeSrt(oursParse.result));
const peerSer = time(() => templateSerialize(oursParse.result));
// Sanity: both parsers read the same cues, both serializers write the same file.
const a = oursParse.result;
const b = peerParse.result;
if (a.length !== cues.length || b.length !== a.length) throw new Error(`cue count mismatch: ${a.length} vs ${b.length}`);
for (let i = 0; i < a.length; i += 101) {
  if (a[i].text !== b[i].text || Math.abs(a[i].start - b[i].start) > 1e-9 || Math.abs(a[i].end - b[i].end) > 1e-9) throw new Error(`cue ${i} differs`);
}
if (oursSer.result !== peerSer.result || oursSer.result !== big) throw new Error('serializers disagree');

const k = (x) => (x >= 1e6 ? `${(x / 1e6).toFixed(2)}M` : `${(x / 1e3).toFixed(0)}k`);
console.log(`\n@dub/srt, ${WORDS} words, node ${process.version}, ${os.cpus().length} cpus, best of ${RUNS}\n`);
console.log('Formatting (peer: greedy line filler written in this bench; it has no balancing, natural breaks or reading-speed handling):\n');
console.log('| transcript | profile | @dub/srt ms | @dub/srt words/s | greedy filler (in bench) ms | greedy words/s | ours/greedy throughput |');
console.log('|---|---|---:|---:|---:|---:|---:|');
for (const r of rows) {
  const wps = WORDS / (r.ours.ms / 1000);
  const pw = r.peer ? WORDS / (r.peer.ms / 1000) : undefined;
  console.log(`| ${r.name} | ${r.profile} | ${r.ours.ms.toFixed(0)} | ${k(wps)} | ${r.peer ? r.peer.ms.toFixed(0) : '-'} | ${pw ? k(pw) : '-'} | ${pw ? (wps / pw).toFixed(2) + 'x' : '-'} |`);
}
const mb = big.length / 1e6;
console.log(`\nSRT I/O on a ${cues.length}-cue file (${mb.toFixed(1)} MB; peers: regex parser and template serializer written in this bench, no validation):\n`);
console.log('| operation | @dub/srt ms | @dub/srt MB/s | baseline (regex parser / template serializer, in bench) ms | baseline MB/s | ours/baseline throughput |');
console.log('|---|---:|---:|---:|---:|---:|');
const io = (op, o, p, size) => console.log(`| ${op} | ${o.ms.toFixed(1)} | ${(size / (o.ms / 1000)).toFixed(1)} | ${p.ms.toFixed(1)} | ${(size / (p.ms / 1000)).toFixed(1)} | ${(p.ms / o.ms).toFixed(2)}x |`);
io('parse (LF)', oursParse, peerParse, mb);
io('parse (CRLF)', oursParseCrlf, peerParseCrlf, bigCrlf.length / 1e6);
io('readSrt, tolerant (LF text)', oursRead, peerParse, mb);
io('readSrt, tolerant (CRLF bytes)', oursReadBytes, peerParseCrlf, bigCrlf.length / 1e6);
io('serialize (LF)', oursSer, peerSer, mb);
