/**
 * Bytes of a subtitle file -> text, never replacing a character.
 *
 * In order: a byte order mark decides (UTF-8, UTF-16 LE/BE, UTF-32 LE/BE); else strict UTF-8
 * (ASCII included); else the encoding `chardet` detects, decoded by TextDecoder (Node's full ICU:
 * windows-125x, ISO-8859-x, KOI8-R, GB18030, Big5, Shift_JIS, EUC-JP, EUC-KR, ISO-2022-x).
 * Every decoding is strict (`fatal: true`): a byte sequence the encoding does not define refuses
 * the file instead of becoming U+FFFD. A detected encoding is used only when chardet is sure
 * (confidence >= 90, what its multi-byte recognisers give a real match) or when no other
 * candidate within 3/4 of its confidence reads the bytes as different text (Latin-1 against
 * Latin-2 on a short file is a guess, and a guess is refused); a decoding that yields control
 * characters (C0 other than tab/newline/form feed, C1) is not a candidate.
 */
import { fitsLanguage, legacyEncodings } from './letters.js';
import chardet from 'chardet';
import { SrtParseError } from '@dub/core';

export interface DecodeSrtOptions {
  /**
   * The encoding, when the caller knows it (a TextDecoder label: "windows-1252", "gb18030",
   * "shift_jis", "utf-16le", ... or "utf-32le"/"utf-32be"): detection is skipped. A BOM still wins.
   */
  encoding?: string;
  /**
   * The language the text is in (a locale such as "fr-FR", or a code), when the caller knows it:
   * where chardet cannot tell two legacy encodings apart, the reading whose letters are all ones
   * that language is written with is taken (letters.ts); without it such a file is refused.
   */
  language?: string;
}

export interface DecodedSrt {
  text: string;
  /** The encoding read (TextDecoder's canonical name, or utf-32le/utf-32be). */
  encoding: string;
  /** How it was known: a byte order mark, valid UTF-8, named by the caller, or detected. */
  how: 'bom' | 'utf-8' | 'given' | 'detected';
  /** For `detected`: chardet's name for it and its confidence (0-100), and the language whose letters chose it among readings chardet could not tell apart. */
  detected?: { name: string; confidence: number; byLettersOf?: string };
}

/** Confidence at which chardet's answer is taken without looking at the others. */
const SURE = 90;
/** Below this no single-byte guess is taken. */
const MIN_CONFIDENCE = 20;
/** A runner-up within this share of the best confidence that reads differently makes it a guess. */
const RIVAL_SHARE = 0.75;

function fail(message: string, line: number, fix: string): never {
  throw new SrtParseError(`${message}; fix: ${fix}`, line, { field: 'srt', details: { reason: 'encoding', fix } });
}

/** 1-based line of byte `offset` (LF, CR or CRLF ends a line; `width` is the code unit size). */
function lineAtByte(bytes: Uint8Array, offset: number, width = 1, littleEndian = true): number {
  let line = 1;
  for (let i = 0; i + width <= offset; i += width) {
    const c = width === 1 ? bytes[i]! : littleEndian ? bytes[i]! | (bytes[i + 1]! << 8) : (bytes[i]! << 8) | bytes[i + 1]!;
    const next = width === 1 ? bytes[i + 1] : littleEndian ? bytes[i + 2]! | (bytes[i + 3]! << 8) : (bytes[i + 2]! << 8) | bytes[i + 3]!;
    if (c === 10 || (c === 13 && next !== 10)) line++;
  }
  return line;
}

/** Offset of the first byte that is not part of valid UTF-8, or -1. Linear. */
export function firstInvalidUtf8(b: Uint8Array): number {
  return scanUtf8(b).invalid;
}

/**
 * The first invalid byte (-1: none) and the first valid multi-byte sequence on a line without any
 * invalid byte (-1: none): a line that is UTF-8 by itself. Linear.
 */
function scanUtf8(b: Uint8Array): { invalid: number; multibyte: number } {
  const n = b.length;
  let invalid = -1;
  let multibyte = -1;
  let lineMulti = -1;
  let lineInvalid = false;
  let i = 0;
  while (i <= n) {
    const c = b[i];
    if (c === undefined || c === 10 || c === 13) {
      if (lineMulti >= 0 && !lineInvalid && multibyte < 0) multibyte = lineMulti;
      if (c === undefined || (invalid >= 0 && multibyte >= 0)) break;
      lineMulti = -1;
      lineInvalid = false;
      i++;
      continue;
    }
    const len = utf8SequenceAt(b, i);
    if (len === 0) {
      if (invalid < 0) invalid = i;
      lineInvalid = true;
      i++;
    } else {
      if (len > 1 && lineMulti < 0) lineMulti = i;
      i += len;
    }
  }
  return { invalid, multibyte };
}

/** Length of the valid UTF-8 sequence at i, or 0. */
function utf8SequenceAt(b: Uint8Array, i: number): number {
  const n = b.length;
  const c = b[i]!;
  if (c < 0x80) return 1;
  let need: number;
  let min: number;
  if (c >= 0xc2 && c <= 0xdf) (need = 1), (min = 0x80);
  else if (c >= 0xe0 && c <= 0xef) (need = 2), (min = 0x800);
  else if (c >= 0xf0 && c <= 0xf4) (need = 3), (min = 0x10000);
  else return 0;
  if (i + need >= n) return 0;
  let cp = c & (0x3f >> need);
  for (let k = 1; k <= need; k++) {
    const t = b[i + k]!;
    if ((t & 0xc0) !== 0x80) return 0;
    cp = (cp << 6) | (t & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return need + 1;
}

function hex(b: Uint8Array, at: number, length = 4): string {
  return Array.from(b.subarray(at, at + length), (x) => `0x${x.toString(16).toUpperCase().padStart(2, '0')}`).join(' ');
}

function decodeUtf32(bytes: Uint8Array, start: number, littleEndian: boolean): string {
  if ((bytes.length - start) % 4 !== 0) fail(`UTF-32 (by its byte order mark) but ${bytes.length - start} bytes after the mark is not a multiple of 4`, lineAtByte(bytes, bytes.length - ((bytes.length - start) % 4), 4, littleEndian), 'save the file again as UTF-8');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const parts: string[] = [];
  let chunk: number[] = [];
  for (let i = start; i < bytes.length; i += 4) {
    const cp = view.getUint32(i, littleEndian);
    if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
      fail(`UTF-32 (by its byte order mark) but the bytes ${hex(bytes, i)} are not a character`, lineAtByte(bytes, i, 4, littleEndian), 'save the file again as UTF-8');
    }
    chunk.push(cp);
    if (chunk.length === 8192) {
      parts.push(String.fromCodePoint(...chunk));
      chunk = [];
    }
  }
  parts.push(String.fromCodePoint(...chunk));
  return parts.join('');
}

/**
 * windows-1252's bytes 0x80-0x9F (WHATWG index). Node 20's TextDecoder('windows-1252') decodes
 * them as C1 controls (ISO-8859-1), losing the euro sign, curly quotes and dashes.
 */
const CP1252_HIGH = [
  0x20ac, 0x81, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030, 0x160, 0x2039, 0x152, 0x8d, 0x17d, 0x8f,
  0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x2dc, 0x2122, 0x161, 0x203a, 0x153, 0x9d, 0x17e, 0x178,
];

function decodeWindows1252(bytes: Uint8Array): string {
  const parts: string[] = [];
  for (let i = 0; i < bytes.length; i += 8192) {
    const codes = Array.from(bytes.subarray(i, i + 8192), (b) => (b >= 0x80 && b <= 0x9f ? CP1252_HIGH[b - 0x80]! : b));
    parts.push(String.fromCharCode(...codes));
  }
  return parts.join('');
}

/** Decode strictly with a TextDecoder label (windows-1252 by its own table); undefined where a byte is not defined. */
export function decodeStrict(label: string, bytes: Uint8Array): string | undefined {
  if (canonical(label) === 'windows-1252') return decodeWindows1252(bytes);
  return strict(label, bytes);
}

function strict(label: string, bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder(label, { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

function canonical(label: string): string | undefined {
  try {
    return new TextDecoder(label).encoding;
  } catch {
    return undefined;
  }
}

/** Control characters a subtitle never holds (a sign of the wrong encoding). Tab, LF, VT, FF, CR allowed. */
function hasStrayControls(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c < 32 && c !== 9 && c !== 10 && c !== 11 && c !== 12 && c !== 13) || (c >= 0x7f && c <= 0x9f)) return true;
  }
  return false;
}

/** Whether the bytes look like UTF-16 without a BOM: many NULs, nearly all on one side of the pairs. */
function looksUtf16(bytes: Uint8Array): 'le' | 'be' | undefined {
  const n = Math.min(bytes.length, 4096) & ~1;
  let even = 0;
  let odd = 0;
  for (let i = 0; i < n; i += 2) {
    if (bytes[i] === 0) even++;
    if (bytes[i + 1] === 0) odd++;
  }
  if (n >= 8 && odd > n / 8 && even < odd / 8) return 'le';
  if (n >= 8 && even > n / 8 && odd < even / 8) return 'be';
  return undefined;
}

/** Decode the bytes of an SRT (or any subtitle text) file. Throws SrtParseError (reason `encoding`) naming the line. */
export function decodeSrtBytes(bytes: Uint8Array, opts: DecodeSrtOptions = {}): DecodedSrt {
  const b0 = bytes[0];
  const b1 = bytes[1];
  const b2 = bytes[2];
  const b3 = bytes[3];
  if (b0 === 0xef && b1 === 0xbb && b2 === 0xbf) {
    const bad = firstInvalidUtf8(bytes.subarray(3));
    if (bad >= 0) fail(`the file starts with a UTF-8 byte order mark but the bytes ${hex(bytes, bad + 3)} are not UTF-8`, lineAtByte(bytes, bad + 3), 'save the file again as UTF-8 (or remove the byte order mark if it is in another encoding)');
    return { text: new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes.subarray(3)), encoding: 'utf-8', how: 'bom' };
  }
  if (b0 === 0xff && b1 === 0xfe && b2 === 0 && b3 === 0) return { text: decodeUtf32(bytes, 4, true), encoding: 'utf-32le', how: 'bom' };
  if (b0 === 0 && b1 === 0 && b2 === 0xfe && b3 === 0xff) return { text: decodeUtf32(bytes, 4, false), encoding: 'utf-32be', how: 'bom' };
  if ((b0 === 0xff && b1 === 0xfe) || (b0 === 0xfe && b1 === 0xff)) {
    const le = b0 === 0xff;
    const label = le ? 'utf-16le' : 'utf-16be';
    const text = strict(label, bytes.subarray(2));
    if (text === undefined) {
      // Find the unit that broke it: an odd length or an unpaired surrogate.
      let at = bytes.length - 1;
      for (let i = 2; i + 1 < bytes.length; i += 2) {
        const u = le ? bytes[i]! | (bytes[i + 1]! << 8) : (bytes[i]! << 8) | bytes[i + 1]!;
        const v = i + 3 < bytes.length ? (le ? bytes[i + 2]! | (bytes[i + 3]! << 8) : (bytes[i + 2]! << 8) | bytes[i + 3]!) : -1;
        if (u >= 0xd800 && u <= 0xdbff && !(v >= 0xdc00 && v <= 0xdfff)) {
          at = i;
          break;
        }
        if (u >= 0xdc00 && u <= 0xdfff) {
          at = i;
          break;
        }
        if (u >= 0xd800 && u <= 0xdbff) i += 2;
      }
      fail(`${label.toUpperCase()} (by its byte order mark) but the bytes ${hex(bytes, at)} are not a character`, lineAtByte(bytes, at, 2, le), 'save the file again as UTF-8');
    }
    return { text, encoding: label, how: 'bom' };
  }
  if (opts.encoding !== undefined) {
    const want = opts.encoding.toLowerCase();
    if (want === 'utf-32le' || want === 'utf-32be') return { text: decodeUtf32(bytes, 0, want === 'utf-32le'), encoding: want, how: 'given' };
    const label = canonical(want);
    if (!label) fail(`unknown encoding "${opts.encoding}"`, 1, 'name an encoding TextDecoder knows, e.g. utf-8, windows-1252, gb18030, shift_jis, big5');
    const text = decodeStrict(label, bytes);
    if (text === undefined) fail(`the file is not valid ${label}`, 1, 'name the encoding the file was saved in, or save it again as UTF-8');
    return { text, encoding: label, how: 'given' };
  }
  const utf16 = looksUtf16(bytes);
  if (utf16) fail(`the file looks like UTF-16${utf16 === 'le' ? 'LE' : 'BE'} without a byte order mark (every other byte is 0)`, 1, 'save it again as UTF-8, or as UTF-16 with a byte order mark');
  const { invalid: bad, multibyte } = scanUtf8(bytes);
  if (bad < 0) return { text: new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes), encoding: 'utf-8', how: 'utf-8' };
  const line = lineAtByte(bytes, bad);

  // Candidates: chardet's matches that TextDecoder knows, that decode strictly and hold no stray controls.
  const tried: string[] = ['utf-8'];
  const candidates: { name: string; label: string; confidence: number; text: string }[] = [];
  for (const m of chardet.analyse(bytes)) {
    if (m.confidence <= 0 || /^(UTF|ASCII)/i.test(m.name)) continue;
    const label = canonical(m.name);
    if (!label || candidates.some((c) => c.label === label)) continue;
    if (!tried.includes(label)) tried.push(label);
    const text = decodeStrict(label, bytes);
    if (text === undefined || hasStrayControls(text)) continue;
    candidates.push({ name: m.name, label, confidence: m.confidence, text });
  }
  // With the language known, its usual legacy encodings are tried too, and where chardet is unsure
  // (no guess, a low one, or a rival that reads differently) the one reading whose letters are all
  // the language's is taken.
  const byLetters = (): DecodedSrt | undefined => {
    if (!opts.language) return undefined;
    const pool = [...candidates];
    for (const label of legacyEncodings(opts.language)) {
      if (pool.some((c) => c.label === label)) continue;
      const text = decodeStrict(label, bytes);
      if (text === undefined || hasStrayControls(text)) continue;
      if (!tried.includes(label)) tried.push(label);
      pool.push({ name: label, label, confidence: 0, text });
    }
    const fit = pool.filter((c) => fitsLanguage(c.text, opts.language!) === true);
    if (fit.length === 0 || !fit.every((c) => c.text === fit[0]!.text)) return undefined;
    const pick = fit[0]!;
    // a file mixing UTF-8 with a single-byte encoding stays refused (below)
    if (multibyte >= 0 && /^(windows-|iso-8859|koi8)/.test(pick.label)) return undefined;
    return { text: pick.text, encoding: pick.label, how: 'detected', detected: { name: pick.name, confidence: pick.confidence, byLettersOf: opts.language } };
  };
  const best = candidates[0];
  const fix = 'save the file as UTF-8';
  const what = `the bytes ${hex(bytes, bad)} are not UTF-8`;
  if (!best) {
    const chosen = byLetters();
    if (chosen) return chosen;
    fail(`${what} and no other encoding reads the file cleanly (tried ${tried.join(', ')})`, line, fix);
  }
  // A line of a single-byte text is rarely valid UTF-8 with a multi-byte letter in it (all its high
  // bytes would have to pair up as UTF-8): with one, the file mixes UTF-8 with that encoding (files
  // joined), and either reading would turn one part into other letters. (Multi-byte encodings hold
  // such lines by chance: not checked.)
  if (multibyte >= 0 && /^(windows-|iso-8859|koi8)/.test(best.label)) {
    fail(`the bytes ${hex(bytes, bad)} are not UTF-8, but line ${lineAtByte(bytes, multibyte)} holds UTF-8 (${hex(bytes, multibyte, utf8SequenceAt(bytes, multibyte))}): the file mixes two encodings`, line, 'save every part of the file as UTF-8');
  }
  // The best guess writes the language with letters it does not use (a Croatian "ć" read as
  // windows-1252's "æ"): the one reading in the language's own letters, where there is one.
  if (opts.language && fitsLanguage(best.text, opts.language) === false) {
    const chosen = byLetters();
    if (chosen) return chosen;
  }
  if (best.confidence < SURE) {
    const chosen = best.confidence < MIN_CONFIDENCE || candidates.some((c) => c !== best && c.confidence >= best.confidence * RIVAL_SHARE && c.text !== best.text) ? byLetters() : undefined;
    if (chosen) return chosen;
    if (best.confidence < MIN_CONFIDENCE) fail(`${what} and the encoding cannot be told (best guess ${best.label}, confidence ${best.confidence} of 100; tried ${tried.join(', ')})`, line, fix);
    const rival = candidates.find((c) => c !== best && c.confidence >= best.confidence * RIVAL_SHARE && c.text !== best.text);
    if (rival) fail(`${what} and the encoding cannot be told: ${best.label} (confidence ${best.confidence}) and ${rival.label} (${rival.confidence}) read it differently (tried ${tried.join(', ')})`, line, fix);
  }
  return { text: best.text, encoding: best.label, how: 'detected', detected: { name: best.name, confidence: best.confidence } };
}
