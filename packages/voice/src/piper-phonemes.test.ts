import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { resolveContext } from '@dub/core';
import {
  CLAUSE_COLON,
  CLAUSE_COMMA,
  CLAUSE_EOF,
  CLAUSE_EXCLAMATION,
  CLAUSE_PERIOD,
  CLAUSE_QUESTION,
  CLAUSE_SEMICOLON,
  normalizeForEspeak,
  piperClausePunctuation,
  readClauses,
} from './engines/espeak-clauses.js';
import { parsePiperConfig } from './engines/piper-config.js';
import { phonemeIds, phonemize, piperClausePhonemes, piperSentences, splitClauses, stripLanguageFlags } from './engines/piper-phonemes.js';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');
const ctx = resolveContext();
const clauses = (text: string, voice = 'en-us') => readClauses(normalizeForEspeak(text), voice).map((c) => [c.source, c.type]);

describe('espeak-ng clause boundaries (as Piper gets them)', () => {
  it('keeps numbers, times and decimal separators inside their clause', () => {
    expect(clauses('It costs 3.5 dollars, or 1,200 cents at 10:30.')).toEqual([
      ['It costs 3.5 dollars,', CLAUSE_COMMA],
      ['or 1,200 cents at 10:30.', CLAUSE_PERIOD],
    ]);
    expect(clauses('Cuesta 1.200 euros, o 3,5.', 'es')).toEqual([
      ['Cuesta 1.200 euros,', CLAUSE_COMMA],
      ['o 3,5.', CLAUSE_PERIOD],
    ]);
  });

  it('does not end a clause at an abbreviation dot before a lower-case word', () => {
    expect(clauses('See you at 10 p.m. tomorrow, e.g. here.')).toEqual([
      ['See you at 10 p.m. tomorrow,', CLAUSE_COMMA],
      ['e.g. here.', CLAUSE_PERIOD],
    ]);
    expect(clauses("The U.S.A.'s flag.")).toEqual([["The U.S.A.'s flag.", CLAUSE_PERIOD]]);
  });

  it('reads ordinal dots in languages that write them (de) and not elsewhere', () => {
    expect(clauses('Am 3. mai kam Ludwig XIV. an.', 'de')).toEqual([['Am 3. mai kam Ludwig XIV. an.', CLAUSE_PERIOD]]);
    expect(clauses('Am 3. Mai.', 'de')).toEqual([
      ['Am 3.', CLAUSE_PERIOD],
      ['Mai.', CLAUSE_PERIOD],
    ]);
  });

  it('types every clause: question runs, colons, semicolons, dashes, quotes, the end of the text', () => {
    expect(clauses('Really?! Yes; no: maybe — fine "ok." Done')).toEqual([
      ['Really?!', CLAUSE_QUESTION],
      ['Yes;', CLAUSE_SEMICOLON],
      ['no:', CLAUSE_COLON],
      ['maybe —', CLAUSE_SEMICOLON],
      ['fine "ok.', CLAUSE_PERIOD],
      ['" Done', CLAUSE_EOF],
    ]);
    expect(clauses('¡Hola! ¿Qué tal?', 'es')).toEqual([
      ['¡Hola!', CLAUSE_EXCLAMATION],
      ['¿Qué tal?', CLAUSE_QUESTION],
    ]);
  });

  it('is linear: a long run of punctuation and a long text without any', () => {
    const t0 = performance.now();
    expect(readClauses('.'.repeat(200_000), 'en-us')).toHaveLength(1);
    const long = readClauses('word '.repeat(40_000), 'en-us');
    expect(long.length).toBeGreaterThan(200); // cut every ~725 bytes as espeak-ng does
    expect(performance.now() - t0).toBeLessThan(5000);
  });

  it('appends what Piper appends after each clause type', () => {
    expect([CLAUSE_PERIOD, CLAUSE_QUESTION, CLAUSE_EXCLAMATION, CLAUSE_COMMA, CLAUSE_COLON, CLAUSE_SEMICOLON, CLAUSE_EOF].map(piperClausePunctuation)).toEqual(['.', '?', '!', ', ', ': ', '; ', '']);
  });
});

describe("Piper's phoneme rules", () => {
  it("strips espeak-ng's language-switch flags", () => {
    expect(stripLanguageFlags('lə- (en)fˈʊtbɔːl(fr) ɛ ʒenjˈal')).toEqual('lə- fˈʊtbɔːl ɛ ʒenjˈal');
  });

  it('maps c to k for pt-br only', () => {
    expect(piperClausePhonemes('sˈɛɾcʊ', 'pt-br')).toBe('sˈɛɾkʊ');
    expect(piperClausePhonemes('sˈɛɾcʊ', 'pt')).toBe('sˈɛɾcʊ');
    expect(piperClausePhonemes('abc', 'constructor')).toBe('abc');
  });

  it('joins clauses into sentences at sentence ends only', () => {
    const s = piperSentences(
      [
        { ipa: 'a', type: CLAUSE_COMMA },
        { ipa: 'b', type: CLAUSE_QUESTION },
        { ipa: '', type: CLAUSE_EOF },
        { ipa: 'c', type: CLAUSE_COLON },
      ],
      'en-us',
    );
    expect(s.map((x) => x.phonemes)).toEqual(['a, b?', 'c: ']);
  });

  it('French and German loanwords reach the voice without the flag characters', async () => {
    const fr = await phonemize('Le football est génial.', 'fr', ctx);
    const de = await phonemize('Das Team spielt.', 'de', ctx);
    for (const s of [...fr, ...de]) expect(s.phonemes).not.toMatch(/[()]/u);
    expect(fr[0]!.phonemes).toContain('fˈʊtbɔːl');
  });

  it('keeps the clause punctuation when espeak-ng prints other lines than expected', async () => {
    // an espeak-ng that prints an extra empty line: the whole-text line count no longer matches
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'espeak-extra-'));
    const fake = path.join(dir, 'espeak-ng');
    fs.writeFileSync(fake, '#!/bin/sh\nespeak-ng "$@"\necho\n', { mode: 0o755 });
    const text = 'It costs 3.5 dollars, or 1,200 cents. Is it? Yes.';
    const good = await phonemize(text, 'en-us', ctx);
    const viaFallback = await phonemize(text, 'en-us', ctx, fake);
    expect(viaFallback).toEqual(good);
    expect(good.map((s) => s.phonemes.slice(-1))).toEqual(['.', '?', '.']);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

interface Reference {
  espeak_ng: string;
  entries: { voice: string; text: string; phonemes: string[]; ids: number[][] }[];
}
const refs = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'piper-phoneme-references.json'), 'utf8')) as Reference;
const idMap = parsePiperConfig(JSON.parse(fs.readFileSync(path.join(FIXTURES, 'piper-default-phoneme-id-map.json'), 'utf8')));
const espeakVersion = execFileSync('espeak-ng', ['--version']).toString().trim();
const versionSkip =
  espeakVersion === refs.espeak_ng
    ? undefined
    : `skipped: the references were made with "${refs.espeak_ng}", this host has "${espeakVersion}" (dictionaries differ between versions; regenerate with python3 scripts/make-piper-phoneme-references.py)`;

describe('Piper phoneme ids against references (libespeak-ng espeak_TextToPhonemes + piper-phonemize rules)', () => {
  for (const e of refs.entries) {
    const title = `${e.voice}: ${e.text}`;
    if (versionSkip) {
      it.skip(`${title} (${versionSkip})`, () => undefined);
      continue;
    }
    it(title, async () => {
      const sentences = await phonemize(e.text, e.voice, ctx);
      expect(sentences.map((s) => s.phonemes.normalize('NFD'))).toEqual(e.phonemes);
      expect(sentences.map((s) => phonemeIds(s.phonemes, idMap).ids)).toEqual(e.ids);
    });
  }
});

describe('splitClauses (public)', () => {
  it('gives each clause with the punctuation Piper appends', () => {
    expect(splitClauses('Son las 10:30, ¿vale? Sí.', 'es')).toEqual([
      { text: 'Son las 10:30,', punctuation: ', ' },
      { text: '¿vale?', punctuation: '?' },
      { text: 'Sí.', punctuation: '.' },
    ]);
  });
});
