/**
 * The fixture corpus (fixtures/corpus: SRT test files of other open-source subtitle projects, see
 * SOURCES) read by readSrt and by ffmpeg's SubRip demuxer: every file ffmpeg reads is read with
 * the same cues (start, end, text), or refused for a stated reason with a fix; no file loses a
 * character silently.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SrtParseError } from '@dub/core';
import { describe, expect, it } from 'vitest';
import { decodeStrict } from './decode.js';
import { ffmpegCues, ffprobeMissing, normaliseCueText } from './ffmpeg-cues.test-util.js';
import { readSrt, type SrtReadErrorReason } from './read.js';

const DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'corpus');
const SOURCES = fs
  .readFileSync(path.join(DIR, 'SOURCES'), 'utf8')
  .split('\n')
  .filter((l) => l && !l.startsWith('#'))
  .map((l) => l.split('\t'));
const FILES = fs.readdirSync(DIR).filter((f) => f !== 'SOURCES' && !f.startsWith('.')).sort();

/** Files refused, with the reason and the line; each is a file ffmpeg garbles or reads as nothing. */
const REFUSED: Record<string, { reason: SrtReadErrorReason; line: number; because: RegExp }> = {
  // "00:01:39 --> 00:01:41,04": ffmpeg skips the cue (its first) without a word.
  'go-astisub--example-in.srt': { reason: 'broken_timing', line: 2, because: /has no milliseconds/ },
  'go-astisub--example-in-non-utf8.srt': { reason: 'broken_timing', line: 2, because: /has no milliseconds/ },
  'go-astisub--missing-sequence-in.srt': { reason: 'broken_timing', line: 1, because: /has no milliseconds/ },
  // "00:00:01 --> 00:00:10": ffmpeg reads no cue.
  'pysrt--invalid.srt': { reason: 'broken_timing', line: 2, because: /has no milliseconds/ },
  // A Latin-2 language in windows-1250: chardet gives windows-1252 35, windows-1250 34, and they read it differently.
  'subtitleedit--auto_detect_windows-1250.srt': { reason: 'encoding', line: 7, because: /the encoding cannot be told: windows-1252 \(confidence \d+\) and windows-1250 \(\d+\) read it differently \(tried utf-8, / },
  // Not SRT at all: ffmpeg reads no cue either.
  'webvtt-py--invalid_format1.srt': { reason: 'no_cues', line: 1, because: /no timing line/ },
  'webvtt-py--invalid_format2.srt': { reason: 'no_cues', line: 1, because: /no timing line/ },
  'webvtt-py--invalid_format3.srt': { reason: 'no_cues', line: 1, because: /no timing line/ },
  'webvtt-py--invalid_format4.srt': { reason: 'no_cues', line: 1, because: /no text/ },
};

/** The encoding each file must be read as (utf-8 where not listed). */
const ENCODING: Record<string, string> = {
  'cdown-srt--gb2312.srt': 'gb18030',
  'pysrt--windows-1252.srt': 'windows-1252',
  'pysrt--bom-utf-16-be.srt': 'utf-16be',
  'pysrt--bom-utf-16-le.srt': 'utf-16le',
  'pysrt--bom-utf-32-be.srt': 'utf-32be',
  'pysrt--bom-utf-32-le.srt': 'utf-32le',
  'go-astisub--example-in-non-utf8.srt': 'utf-16le',
  'subtitleedit--auto_detect_windows-1251.srt': 'windows-1251',
};

/** Files ffmpeg cannot read (UTF-32) whose cues must equal ffmpeg's reading of another file with the same text. */
const SAME_AS: Record<string, string> = {
  'pysrt--bom-utf-32-be.srt': 'pysrt--bom-utf-16-be.srt',
  'pysrt--bom-utf-32-le.srt': 'pysrt--bom-utf-16-le.srt',
};

function countReplacementBytes(b: Buffer): number {
  let n = 0;
  for (let i = b.indexOf('\uFFFD'); i >= 0; i = b.indexOf('\uFFFD', i + 1)) n++;
  return n;
}

describe('fixture corpus', () => {
  it('every fixture is listed in SOURCES with repository, commit, path and licence, and the corpus stays small', () => {
    const listed = SOURCES.map((s) => s[0]);
    expect(listed.sort()).toEqual(FILES);
    for (const s of SOURCES) {
      expect(s, s[0]).toHaveLength(5);
      expect(s[2], s[0]).toMatch(/^[0-9a-f]{40}$/);
      expect(s[4], s[0]).toMatch(/^(MIT|GPL-3\.0|BSD-\d-Clause|Apache-2\.0)$/);
    }
    const bytes = FILES.reduce((n, f) => n + fs.statSync(path.join(DIR, f)).size, 0);
    expect(bytes).toBeLessThan(2_000_000);
    expect(FILES.length).toBeGreaterThanOrEqual(50);
  });

  const missing = ffprobeMissing();
  describe.skipIf(missing !== undefined)(`cue for cue against ffmpeg's SubRip demuxer${missing ? ` (skipped: ${missing})` : ''}`, () => {
    for (const file of FILES) {
      it(file, () => {
        const bytes = fs.readFileSync(path.join(DIR, file));
        const theirs = ffmpegCues(path.join(DIR, SAME_AS[file] ?? file));
        const refused = REFUSED[file];
        if (refused) {
          let error: unknown;
          try {
            readSrt(bytes);
          } catch (e) {
            error = e;
          }
          expect(error, `${file} should be refused`).toBeInstanceOf(SrtParseError);
          const e = error as SrtParseError;
          expect(e.details?.reason).toBe(refused.reason);
          expect(e.line).toBe(refused.line);
          expect(e.message).toMatch(refused.because);
          expect(e.message).toMatch(/^line \d+: .+; fix: .+/);
          return;
        }
        expect(theirs.length, `ffmpeg reads ${file}`).toBeGreaterThan(0);
        const reading = readSrt(bytes);
        const encoding = ENCODING[file] ?? 'utf-8';
        expect(reading.encoding).toBe(encoding);
        // ffmpeg passes legacy encodings through as bytes and turns UTF-16 into UTF-8.
        const label = /^utf-(16|32)/.test(encoding) ? 'utf-8' : encoding;
        const expected = theirs.map((c) => ({ start: c.start, end: c.end, text: normaliseCueText(decodeStrict(label, c.data)!) })).filter((c) => c.text !== '');
        expect(reading.cues.map(({ start, end, text }) => ({ start, end, text }))).toEqual(expected);
        // No character replaced: a U+FFFD in the cues is one the file itself holds.
        const decoded = reading.cues.map((c) => c.text).join('\n');
        const fffd = [...decoded].filter((c) => c === '\uFFFD').length;
        if (encoding === 'utf-8') expect(fffd).toBe(countReplacementBytes(bytes));
        else expect(fffd).toBe(0);
        if (fffd > 0) expect(reading.notes.map((n) => n.kind)).toContain('replacement_characters');
        // A dropped cue is always said.
        if (expected.length < theirs.length) expect(reading.notes.map((n) => n.kind)).toContain('empty_cues_dropped');
        if (encoding !== 'utf-8') expect(reading.notes.find((n) => n.kind === 'decoded')?.message).toContain(`decoded as ${encoding}`);
      });
    }
  });
});
