import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatSubtitles, formatSubtitlesWithReport, type FormatReport } from './format.js';
import { countGraphemes } from './graphemes.js';
import { SRT_PROFILE_LIMITS, SRT_PROFILE_NAMES, type SrtProfileName } from './profiles.js';
import type { SrtCue, SubtitleSegment } from './types.js';

const GAP_MS = 80;
const MIN_DURATION_MS = 700;
const ms = (s: number): number => Math.round(s * 1000);
const strip = (s: string): string => s.replace(/\s+/gu, '');

// ---------------------------------------------------------------- generators

type ScriptName = 'latin' | 'cyrillic' | 'arabic' | 'cjk' | 'thai' | 'mixed';
const SPACED: Record<ScriptName, boolean> = { latin: true, cyrillic: true, arabic: true, cjk: false, thai: false, mixed: true };
const LOCALE: Record<ScriptName, string | undefined> = { latin: 'en-US', cyrillic: 'ru-RU', arabic: 'ar-AE', cjk: 'zh-CN', thai: 'th-TH', mixed: 'en-US' };

const HAN = Array.from('的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长知民样现分将外但身些与高意进');
const THAI_C = Array.from('กขคงจฉชซญดตถทนบปผพฟมยรลวสหอฮ');
const THAI_M = ['', '', 'ั', 'ิ', 'ี', 'ุ', 'ู', '่', '้', 'ี่'];

const chars = (alphabet: string, max: number): fc.Arbitrary<string> =>
  fc.array(fc.constantFrom(...Array.from(alphabet)), { minLength: 1, maxLength: max }).map((a) => a.join(''));
const suffixed = (w: fc.Arbitrary<string>, suffixes: string[]): fc.Arbitrary<string> =>
  fc.tuple(w, fc.constantFrom('', '', '', '', ...suffixes)).map(([a, b]) => a + b);

const WORD: Record<ScriptName, fc.Arbitrary<string>> = {
  latin: fc.oneof(
    { weight: 8, arbitrary: suffixed(chars('abcdefghijklmnopqrstuvwxyzéàüöñ', 11), [',', '.', '?', '!', ';']) },
    { weight: 2, arbitrary: fc.constantFrom('and', 'the', 'but', 'because', 'a', 'of') },
  ),
  cyrillic: fc.oneof(
    { weight: 8, arbitrary: suffixed(chars('абвгдежзийклмнопрстуфхцчшщыэюяё', 11), [',', '.', '?', '—']) },
    { weight: 2, arbitrary: fc.constantFrom('и', 'но', 'что', 'когда') },
  ),
  arabic: suffixed(chars('ابتثجحخدذرزسشصضطظعغفقكلمنهوي', 9), ['،', '؟', '.']),
  cjk: suffixed(chars(HAN.join(''), 4), ['，', '。', '？', '、']),
  thai: fc
    .array(fc.tuple(fc.constantFrom(...THAI_C), fc.constantFrom(...THAI_M)), { minLength: 1, maxLength: 6 })
    .map((a) => a.map(([c, m]) => c + m).join('')),
  mixed: fc.oneof(
    chars('abcdefghij', 8),
    chars('абвгдежз', 8),
    chars('ابتثجحخ', 6),
    fc.constantFrom('👍🏽', 'e\u0301te\u0301', '🇫🇷', 'naïve', 'x²', '—'),
    chars(HAN.join(''), 3),
  ),
};

interface GenWord {
  text: string;
  extra: number;
  gap: number;
  pause: number;
}

const genWord = (script: ScriptName, long: boolean): fc.Arbitrary<GenWord> =>
  fc.record({
    text: long ? fc.oneof({ weight: 12, arbitrary: WORD[script] }, { weight: 1, arbitrary: fc.integer({ min: 23, max: 90 }).map((n) => 'w'.repeat(n)) }) : WORD[script],
    extra: fc.integer({ min: 0, max: 200 }),
    gap: fc.integer({ min: 100, max: 450 }),
    pause: fc.oneof({ weight: 9, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 500, max: 3000 }) }),
  });

/** Realistic timings: each word lasts at least 80 ms per character, with 100+ ms between words. */
function buildTranscript(segs: GenWord[][], script: ScriptName, withWords: boolean, speakers: boolean): SubtitleSegment[] {
  let t = 250;
  return segs.map((words, si) => {
    const timed = words.map((w) => {
      const start = t;
      const end = start + countGraphemes(w.text) * 80 + w.extra;
      t = end + w.gap + w.pause;
      return { text: w.text, start: start / 1000, end: end / 1000 };
    });
    t += 300;
    const text = timed.map((w) => w.text).join(SPACED[script] ? ' ' : '');
    const seg: SubtitleSegment = { start: timed[0]!.start, end: timed[timed.length - 1]!.end, text };
    if (withWords) seg.words = timed;
    if (speakers) seg.speaker = si % 3 === 0 ? 'A' : 'B';
    return seg;
  });
}

const transcriptArb = (script: ScriptName, long = false) =>
  fc.record({
    segs: fc.array(fc.array(genWord(script, long), { minLength: 1, maxLength: 30 }), { minLength: 0, maxLength: 7 }),
    withWords: fc.boolean(),
    speakers: fc.boolean(),
    useLocale: fc.boolean(),
  });

// ---------------------------------------------------------------- invariant checks

function inputWords(segs: SubtitleSegment[], spaced: boolean): string[] {
  return segs.flatMap((s) => (s.words ? s.words.map((w) => w.text) : spaced ? s.text.split(/\s+/).filter(Boolean) : [s.text]));
}

function checkLimits(cues: SrtCue[], profile: SrtProfileName): void {
  const lim = SRT_PROFILE_LIMITS[profile];
  cues.forEach((c, k) => {
    expect(c.index).toBe(k + 1);
    const lines = c.text.split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(1);
    expect(lines.length).toBeLessThanOrEqual(lim.maxLines);
    let total = 0;
    for (const line of lines) {
      expect(line).not.toBe('');
      expect(line).toBe(line.trim());
      const n = countGraphemes(line);
      expect(n).toBeLessThanOrEqual(lim.maxLineChars);
      total += n;
    }
    expect(total).toBeLessThanOrEqual(lim.maxBlockChars);
  });
}

/** Time order, positive durations, the minimum gap, and what the report says about each cue. */
function checkTiming(r: FormatReport, profile: SrtProfileName): void {
  const lim = SRT_PROFILE_LIMITS[profile];
  const { cues, violations } = r;
  cues.forEach((c, k) => {
    const s = ms(c.start);
    const e = ms(c.end);
    expect(e).toBeGreaterThan(s);
    expect(s).toBeGreaterThanOrEqual(0);
    const prev = cues[k - 1];
    const next = cues[k + 1];
    if (prev) expect(s - ms(prev.end)).toBeGreaterThanOrEqual(GAP_MS);
    const chars = countGraphemes(c.text.replace('\n', ''));
    const slow = chars * 1000 > lim.maxCharsPerSecond * (e - s);
    const short = e - s < MIN_DURATION_MS;
    expect(violations.some((v) => v.cue === c.index && v.kind === 'reading_speed')).toBe(slow);
    expect(violations.some((v) => v.cue === c.index && v.kind === 'min_duration')).toBe(short);
    if (slow || short) {
      // It already uses all the silence around it.
      expect(s).toBe(prev ? ms(prev.end) + GAP_MS : 0);
      expect(next).toBeDefined();
      expect(ms(next!.start) - e).toBe(GAP_MS);
    }
  });
}

function checkWords(cues: SrtCue[], segs: SubtitleSegment[], spaced: boolean, profile: SrtProfileName, wordLevel: boolean): void {
  const words = inputWords(segs, spaced);
  expect(strip(cues.map((c) => c.text).join(''))).toBe(strip(words.join('')));
  const lim = SRT_PROFILE_LIMITS[profile];
  if (wordLevel && words.every((w) => countGraphemes(w) <= lim.maxLineChars)) {
    expect(cues.flatMap((c) => c.text.split(/\s+/))).toEqual(words);
  }
}

/** Per-segment profiles: every segment boundary is a cue boundary. */
function checkSegmentBoundaries(cues: SrtCue[], segs: SubtitleSegment[], spaced: boolean): void {
  const cueEnds = new Set<number>();
  let at = 0;
  for (const c of cues) cueEnds.add((at += strip(c.text).length));
  at = 0;
  for (const s of segs) {
    const w = inputWords([s], spaced);
    if (w.length === 0) continue;
    at += strip(w.join('')).length;
    expect(cueEnds.has(at)).toBe(true);
  }
}

// ---------------------------------------------------------------- property tests

describe('formatSubtitles: invariants over random transcripts', () => {
  const scripts: ScriptName[] = ['latin', 'cyrillic', 'arabic', 'cjk', 'thai', 'mixed'];
  for (const script of scripts) {
    it(`${script}: limits, words, order, gap, duration and reading speed hold for every profile`, () => {
      fc.assert(
        fc.property(transcriptArb(script, script === 'latin' || script === 'cjk'), ({ segs, withWords, speakers, useLocale }) => {
          const transcript = buildTranscript(segs, script, withWords, speakers);
          const opts = useLocale && LOCALE[script] ? { locale: LOCALE[script] } : {};
          for (const profile of SRT_PROFILE_NAMES) {
            const r = formatSubtitlesWithReport(transcript, profile, opts);
            checkLimits(r.cues, profile);
            // Without a locale, a mixed segment that is mostly CJK is laid out as unspaced text.
            checkWords(r.cues, transcript, SPACED[script], profile, SPACED[script] && (script !== 'mixed' || opts.locale !== undefined));
            checkTiming(r, profile);
            // Realistic timings always leave time to read.
            expect(r.violations.filter((v) => v.kind === 'reading_speed')).toEqual([]);
            if (!SRT_PROFILE_LIMITS[profile].crossSegment) checkSegmentBoundaries(r.cues, transcript, SPACED[script]);
          }
        }),
        { numRuns: Number(process.env.SRT_PROPERTY_RUNS ?? 60) },
      );
    });
  }

  it('crowded and overlapping timings: limits and words still hold, cues never overlap', () => {
    const seg = fc.record({
      words: fc.array(fc.record({ text: WORD.latin, start: fc.integer({ min: 0, max: 20_000 }), dur: fc.integer({ min: 0, max: 400 }) }), { minLength: 1, maxLength: 40 }),
    });
    fc.assert(
      fc.property(fc.array(seg, { maxLength: 5 }), (raw) => {
        const transcript: SubtitleSegment[] = raw.map(({ words }) => {
          const ws = words.map((w) => ({ text: w.text, start: w.start / 1000, end: (w.start + w.dur) / 1000 }));
          return { start: Math.min(...ws.map((w) => w.start)), end: Math.max(...ws.map((w) => w.end)), text: '', words: ws };
        });
        for (const profile of SRT_PROFILE_NAMES) {
          const r = formatSubtitlesWithReport(transcript, profile);
          checkLimits(r.cues, profile);
          const words = [...transcript].sort((a, b) => a.start - b.start).flatMap((s) => s.words!.map((w) => w.text));
          expect(cuesWords(r.cues)).toEqual(words);
          checkTiming(r, profile);
        }
      }),
      { numRuns: Number(process.env.SRT_PROPERTY_RUNS ?? 100) },
    );
  });
});

function cuesWords(cues: SrtCue[]): string[] {
  return cues.flatMap((c) => c.text.split(/\s+/));
}

// ---------------------------------------------------------------- examples and edge cases

function words(text: string, start: number, perWord: number, gap = 0): SubtitleSegment {
  const list = text.split(' ').map((w, i) => ({ text: w, start: start + i * (perWord + gap), end: start + i * (perWord + gap) + perWord }));
  return { start, end: list[list.length - 1]!.end, text, words: list };
}

describe('formatSubtitles: examples', () => {
  it('empty input gives no cues', () => {
    for (const p of SRT_PROFILE_NAMES) {
      expect(formatSubtitles([], p)).toEqual([]);
      expect(formatSubtitles([{ start: 0, end: 1, text: '  ' }, { start: 1, end: 2, text: '', words: [] }], p)).toEqual([]);
    }
  });

  it('a short sentence is one single-line cue at its own time', () => {
    const cues = formatSubtitles([{ start: 1, end: 3, text: 'Hello there, my friend.' }], 'regular');
    expect(cues).toEqual([{ index: 1, start: 1, end: 3, text: 'Hello there, my friend.' }]);
  });

  it('balances two lines and breaks at punctuation', () => {
    const text = 'We walked along the river for hours, and then we found the old bridge.';
    const [cue, ...rest] = formatSubtitles([{ start: 0, end: 5, text }], 'global_regular');
    expect(rest).toEqual([]);
    const [a, b] = cue!.text.split('\n');
    expect(a).toBe('We walked along the river for hours,');
    expect(b).toBe('and then we found the old bridge.');
  });

  it('breaks blocks at sentence ends when there is a choice', () => {
    const text = 'The meeting starts at nine tomorrow morning. Please bring the quarterly report and your laptop with you.';
    const cues = formatSubtitles([{ start: 0, end: 8, text }], 'mobile');
    expect(cues.some((c) => c.text.endsWith('morning.'))).toBe(true);
  });

  it('prefers breaking before a conjunction or article over any other word', () => {
    const text = 'I really like reading long novels but my sister likes short poems';
    const [cue] = formatSubtitles([{ start: 0, end: 5, text }], 'regular', { locale: 'en-US' });
    expect(cue!.text.split('\n')[1]!.startsWith('but ')).toBe(true);
  });

  it('a paragraph: no line ends on an article or conjunction, sentence ends get the line break', () => {
    const para = [
      'When I first moved to the city, I had no idea how expensive everything would be.',
      'The rent alone was twice what I paid back home, and the salary was only a little higher.',
      'But after a few months, I started to understand why people put up with it.',
      'There is always something happening, whether it is a concert in the park or a new restaurant opening down the street.',
    ];
    let t = 0;
    const segs = para.map((text) => {
      const d = text.length / 15;
      const seg = { start: t, end: t + d, text };
      t += d + 0.6;
      return seg;
    });
    for (const p of SRT_PROFILE_NAMES) {
      const r = formatSubtitlesWithReport(segs, p, { locale: 'en-US' });
      expect(r.violations).toEqual([]);
      for (const line of r.cues.flatMap((c) => c.text.split('\n'))) {
        expect(line).not.toMatch(/\b(the|a|an|and|or|but|of|in|to)$/i);
        // A sentence end inside a line is followed by at least a clause, never a dangling word or two.
        const m = /[.?!] (.*)$/.exec(line);
        if (m) expect(m[1]!.length).toBeGreaterThan(15);
      }
    }
    const g = formatSubtitles(segs, 'global_regular', { locale: 'en-US' });
    expect(g.map((c) => c.text)).toContain('and the salary was only a little higher.\nBut after a few months,');
  });

  it('global profiles flow words across segments; per-segment profiles do not', () => {
    const segs = [words('So I went to the store and', 0, 0.25, 0.05), words('bought some milk.', 2.2, 0.25, 0.05)];
    const regular = formatSubtitles(segs, 'regular');
    expect(regular.map((c) => c.text)).toEqual(['So I went to the store and', 'bought some milk.']);
    const global = formatSubtitles(segs, 'global_regular');
    expect(global).toHaveLength(1);
    expect(global[0]!.text.replace('\n', ' ')).toBe('So I went to the store and bought some milk.');
  });

  it('global profiles break at a speaker change and at a long pause', () => {
    const a = { ...words('Are you coming tonight?', 0, 0.3, 0.05), speaker: 'A' };
    const b = { ...words('Yes, of course.', 1.5, 0.3, 0.05), speaker: 'B' };
    expect(formatSubtitles([a, b], 'global_regular').map((c) => c.text)).toEqual(['Are you coming tonight?', 'Yes, of course.']);
    const late = words('Yes, of course.', 1.4 + 2, 0.3, 0.05);
    expect(formatSubtitles([{ ...a, speaker: undefined }, late], 'global_regular')).toHaveLength(2);
  });

  it('splits a single word longer than a line into line-sized pieces without losing characters', () => {
    const long = 'Donaudampfschifffahrtsgesellschaftskapitänswitwenrentenversicherung';
    for (const p of SRT_PROFILE_NAMES) {
      const cues = formatSubtitles([{ start: 0, end: 6, text: `A ${long} here` }], p);
      checkLimits(cues, p);
      expect(strip(cues.map((c) => c.text).join(''))).toBe(strip(`A ${long} here`));
      const L = SRT_PROFILE_LIMITS[p].maxLineChars;
      // Cut after exactly L graphemes, no hyphen added.
      const lines = cues.flatMap((c) => c.text.split('\n'));
      expect(lines.some((l) => l.includes(long.slice(0, L)) && !l.includes(long.slice(0, L + 1)))).toBe(true);
      expect(lines.some((l) => l.startsWith(long.slice(L, L + 10)))).toBe(true);
      expect(cues.join('')).not.toContain('-');
    }
  });

  it('counts grapheme clusters, not code units', () => {
    // 42 graphemes, 78 code units: exactly one regular line.
    const word = 'e\u0301'.repeat(9);
    const text = [word, word, word, word].join(' ') + ' ab';
    expect(countGraphemes(text)).toBe(42);
    expect(text.length).toBe(78);
    const [cue] = formatSubtitles([{ start: 0, end: 5, text }], 'regular');
    expect(cue!.text).toBe(text);
    expect(countGraphemes('👍🏽🇫🇷')).toBe(2);
  });

  it('RTL text keeps its words and breaks after Arabic punctuation', () => {
    const text = 'ذهبنا إلى السوق في الصباح الباكر، واشترينا الكثير من الفواكه الطازجة';
    const [cue, ...rest] = formatSubtitles([{ start: 0, end: 6, text }], 'regular', { locale: 'ar-AE' });
    expect(rest).toEqual([]);
    expect(cue!.text).toBe('ذهبنا إلى السوق في الصباح الباكر،\nواشترينا الكثير من الفواكه الطازجة');
  });

  it('tokenizes languages without spaces with Intl.Segmenter and breaks only between words', () => {
    const text = '我们今天早上去了北京的故宫博物院参观，看到了很多非常漂亮的古代文物和历史悠久的建筑物。';
    for (const opts of [{ locale: 'zh-CN' }, {}]) {
      const cues = formatSubtitles([{ start: 0, end: 8, text }], 'mobile', opts);
      checkLimits(cues, 'mobile');
      expect(cues.map((c) => c.text.replace('\n', '')).join('')).toBe(text);
      const seg = new Intl.Segmenter('zh', { granularity: 'word' });
      const bounds = new Set([...seg.segment(text)].map((s) => s.index));
      let at = 0;
      for (const line of cues.flatMap((c) => c.text.split('\n'))) {
        expect(bounds.has(at)).toBe(true);
        at += line.length;
      }
    }
  });

  it('an unknown or malformed locale falls back to script detection', () => {
    const text = '我们今天早上去了北京的故宫博物院参观';
    for (const locale of ['xx-YY', 'zh_CN', '']) {
      const cues = formatSubtitles([{ start: 0, end: 5, text }], 'mobile', { locale });
      expect(cues.map((c) => c.text.replace('\n', '')).join('')).toBe(text);
      checkLimits(cues, 'mobile');
    }
  });

  it('a space-separated locale keeps CJK text unsplit into words (cut only by line length)', () => {
    const text = '我们今天早上去了北京的故宫博物院参观看到了很多';
    const cues = formatSubtitles([{ start: 0, end: 8, text }], 'mobile', { locale: 'en-US' });
    expect(cues.flatMap((c) => c.text.split('\n')).map((l) => countGraphemes(l))).toEqual([22, 1]);
  });

  it('Thai: Segmenter words, spaces between phrases kept', () => {
    const text = 'สวัสดีครับ ผมชื่อสมชาย ผมมาจากกรุงเทพมหานครและชอบกินอาหารไทยมาก';
    const cues = formatSubtitles([{ start: 0, end: 9, text }], 'mobile', { locale: 'th-TH' });
    checkLimits(cues, 'mobile');
    expect(strip(cues.map((c) => c.text).join(''))).toBe(strip(text));
    expect(cues[0]!.text.split('\n')[0]).toBe('สวัสดีครับ ผมชื่อสมชาย');
  });

  it('mixed scripts with given words join Latin words by spaces and CJK words without', () => {
    const ws = ['我', '用', 'iPhone', '15', '拍', '照片'].map((t, i) => ({ text: t, start: i * 0.3, end: i * 0.3 + 0.25 }));
    const [cue] = formatSubtitles([{ start: 0, end: 2, text: '', words: ws }], 'regular', { locale: 'zh-CN' });
    expect(cue!.text).toBe('我用iPhone 15拍照片');
  });

  it('estimates word timings by character share when words are missing', () => {
    const text = 'aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kkkk llll mmmm nnnn';
    const cues = formatSubtitles([{ start: 10, end: 17, text }], 'mobile');
    expect(cues.length).toBeGreaterThan(1);
    // Each cue starts where its first word starts in the proportional estimate.
    let at = 0;
    for (const c of cues) {
      const startMs = 10_000 + Math.round((7000 * at) / 56);
      expect(ms(c.start)).toBeLessThanOrEqual(startMs);
      at += strip(c.text).length;
    }
  });
});

describe('formatSubtitles: reading speed and durations', () => {
  it('extends a fast block into the following silence instead of splitting it', () => {
    // 57 characters (56 in two lines: the line break replaces a space) spoken in 1.5 s, then
    // 4 s of silence: needs 2.67 s at 21 cps.
    const seg = words('Quickly now, everybody get into the car before it rains!!', 1, 0.15, 0.02);
    expect(countGraphemes(seg.text)).toBe(57);
    const next = words('Okay.', 7, 0.4);
    const r = formatSubtitlesWithReport([seg, next], 'regular');
    expect(r.violations).toEqual([]);
    expect(r.cues).toHaveLength(2);
    expect(countGraphemes(r.cues[0]!.text.replace('\n', ''))).toBe(56);
    const dur = ms(r.cues[0]!.end) - ms(r.cues[0]!.start);
    expect(dur).toBeGreaterThanOrEqual(Math.ceil((56 * 1000) / 21));
    expect(ms(r.cues[0]!.start)).toBe(1000);
    // A short cue is held for the minimum duration.
    expect(ms(r.cues[1]!.end) - ms(r.cues[1]!.start)).toBe(MIN_DURATION_MS);
  });

  it('extends back into the silence before a block when the time after it is taken', () => {
    const prev = words('Hi.', 0, 0.3);
    const fast = words('This sentence is spoken far too quickly to read.', 3, 0.1);
    const next = words('Right after it comes another one.', 3.8 + 0.08, 0.3);
    const r = formatSubtitlesWithReport([prev, fast, next], 'regular');
    expect(r.violations).toEqual([]);
    const c = r.cues[1]!;
    expect(c.text.replace('\n', ' ')).toBe('This sentence is spoken far too quickly to read.');
    expect(ms(c.start)).toBeLessThan(3000);
    expect(ms(c.end)).toBe(ms(r.cues[2]!.start) - GAP_MS);
  });

  it('physically impossible reading speed: limits and words hold and each slow cue is reported', () => {
    // 3 x 100 characters, each segment in 1 s with no silence around.
    const text = 'many tiny words packed into one single second of speech without any room to breathe at all ok';
    const segs = [0, 1, 2].map((k) => ({ start: k, end: k + 1, text }));
    for (const p of SRT_PROFILE_NAMES) {
      const r = formatSubtitlesWithReport(segs, p, { mediaDuration: 3 });
      checkLimits(r.cues, p);
      expect(cuesWords(r.cues)).toEqual(Array(3).fill(text.split(' ')).flat());
      const slow = r.violations.filter((v) => v.kind === 'reading_speed');
      expect(slow.length).toBeGreaterThan(0);
      for (const v of slow) {
        expect(v.limit).toBe(SRT_PROFILE_LIMITS[p].maxCharsPerSecond);
        expect(v.value).toBeGreaterThan(v.limit);
      }
      expect(ms(r.cues[r.cues.length - 1]!.end)).toBeLessThanOrEqual(3000);
      r.cues.forEach((c, k) => k > 0 && expect(ms(c.start) - ms(r.cues[k - 1]!.end)).toBeGreaterThanOrEqual(GAP_MS));
    }
  });

  it('honours minGap and minDuration options', () => {
    const segs = [words('One.', 0, 0.2), words('Two.', 0.5, 0.2)];
    const r = formatSubtitlesWithReport(segs, 'regular', { minGap: 0.2, minDuration: 0.1 });
    expect(ms(r.cues[1]!.start) - ms(r.cues[0]!.end)).toBeGreaterThanOrEqual(200);
    expect(r.violations).toEqual([]);
  });

  it('rejects an unknown profile and bad options', () => {
    expect(() => formatSubtitles([], 'cinema' as SrtProfileName)).toThrow(/unknown SRT profile/);
    expect(() => formatSubtitles([], 'regular', { minGap: -1 })).toThrow(/minGap/);
    expect(() => formatSubtitles([{ start: Number.NaN, end: 1, text: 'x' }], 'regular')).toThrow(/finite/);
  });
});
