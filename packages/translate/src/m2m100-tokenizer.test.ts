/**
 * M2M100's tokenizer against the reference: the SentencePiece pieces, ids and decodings that
 * Google's sentencepiece library (0.1.97, Debian python3-sentencepiece) and transformers'
 * M2M100Tokenizer rules give on a BPE model trained by the reference trainer with nmt_nfkc
 * normalisation (scripts/make-tiny-m2m100.py wrote model and references together).
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LOCALES } from '@dub/core';
import { m2m100Files, m2m100Installed } from './engines/m2m100/files.js';
import { m2m100Code, M2M100_LANGUAGES } from './engines/m2m100/languages.js';
import { parseSpmModel } from './engines/m2m100/sentencepiece.js';
import { M2M100Tokenizer } from './engines/m2m100/tokenizer.js';

const FIX = fileURLToPath(new URL('../fixtures/', import.meta.url));
const refs = JSON.parse(fs.readFileSync(`${FIX}m2m100-tokenizer-references.json`, 'utf8')) as {
  vocabSize: number;
  langIds: Record<string, number>;
  sentences: { lang: string; text: string; pieces: string[]; ids: number[]; decoded: string }[];
};
const tok = await M2M100Tokenizer.load(`${FIX}m2m100-tiny-test/sentencepiece.bpe.model`, `${FIX}m2m100-tiny-test/vocab.json`);

describe('M2M100 tokenizer (SentencePiece BPE + vocab.json)', () => {
  it('reads the .model protobuf: BPE, nmt_nfkc with its precompiled charsmap', () => {
    const m = parseSpmModel(fs.readFileSync(`${FIX}m2m100-tiny-test/sentencepiece.bpe.model`));
    expect(m.modelType).toBe(2);
    expect(m.normalizer.name).toBe('nmt_nfkc');
    expect(m.normalizer.precompiledCharsmap.length).toBeGreaterThan(1000);
    expect(m.pieces.slice(0, 3).map((p) => p.piece)).toEqual(['<unk>', '<s>', '</s>']);
  });

  it.each(refs.sentences.map((s) => [s.text, s] as const))('pieces and ids of %j equal the reference', (_t, s) => {
    expect(tok.pieces(s.text)).toEqual(s.pieces);
    expect(tok.encode(s.text, s.lang)).toEqual(s.ids);
  });

  it('decodes to the reference text, dropping language and special tokens', () => {
    for (const s of refs.sentences) {
      const ids = tok.encode(s.text, s.lang);
      // unknown pieces come back as <unk> (dropped), as in transformers; the rest is the reference's decoding
      if (ids.includes(3)) continue;
      expect(tok.decode([2, tok.langId('es'), ...ids.slice(1)])).toBe(s.decoded);
    }
  });

  it('numbers the language tokens after vocab.json: __en__ = len(vocab) + 18, vocabulary + 108', () => {
    expect(tok.langId('en')).toBe(refs.langIds.en);
    expect(tok.langId('fr')).toBe(refs.langIds.fr);
    expect(tok.vocabSize).toBe(refs.vocabSize);
    // in the real model len(vocab.json) is 128,004: __en__ 128,022, __fr__ 128,028, vocabulary 128,112
    expect(128_004 + M2M100_LANGUAGES.indexOf('en')).toBe(128_022);
    expect(128_004 + M2M100_LANGUAGES.indexOf('fr')).toBe(128_028);
    expect(128_004 + 108).toBe(128_112);
  });

  it('maps 38 of the 39 contract locales; Cantonese has no M2M100 language', () => {
    const missing = LOCALES.filter((l) => !m2m100Code(l.code)).map((l) => l.code);
    expect(missing).toEqual(['yue-CN']);
    expect([m2m100Code('fil-PH'), m2m100Code('nb-NO'), m2m100Code('zh-CN'), m2m100Code('pt-BR'), m2m100Code('es-MX')]).toEqual(['tl', 'no', 'zh', 'pt', 'es']);
  });
});

/**
 * The reference implementation's own tokenizer tests, transformers'
 * tests/models/m2m_100/test_tokenization_m2m_100.py (M2M100TokenizerIntegrationTest, checkpoint
 * facebook/m2m100_418M): language ids, and source ids of published sentences.
 */
describe('M2M100 tokenizer against transformers\' published ids', () => {
  it('language ids: ar 128006, en 128022, fr 128028, mr 128063, ro 128076', () => {
    const id = (c: string) => 128_004 + M2M100_LANGUAGES.indexOf(c as (typeof M2M100_LANGUAGES)[number]);
    expect(['ar', 'en', 'fr', 'mr', 'ro'].map(id)).toEqual([128006, 128022, 128028, 128063, 128076]);
  });

  const real = m2m100Installed();
  it.skipIf(!real)(`with the real m2m100-418m files: the published source ids and decoding${real ? '' : ' [skipped: m2m100-418m is not installed here (npx dub models fetch m2m100-418m)]'}`, async () => {
    const f = m2m100Files();
    const t = await M2M100Tokenizer.load(f.spm, f.vocab);
    expect(t.langOffset).toBe(128_004);
    expect(t.encode('In my opinion, there are two levels of response from the French government.', 'en')).toEqual([128022, 593, 1949, 115781, 4, 71586, 4234, 60633, 126233, 432, 123808, 15592, 1197, 117132, 120618, 5, 2]);
    expect(t.encode('A test', 'en')).toEqual([128022, 58, 4183, 2]);
    const generated = [128028, 5364, 82, 8642, 4, 294, 47, 8, 14028, 136, 3286, 9706, 6, 90797, 6, 144012, 162, 88128, 30061, 5, 2];
    expect(t.decode(generated)).toBe(t.decode(generated.slice(1)));
    expect(t.decode(generated)).not.toContain('</s>');
  });
});
