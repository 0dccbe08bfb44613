/**
 * Chatterbox Multilingual's text side against its reference code (mtl_tts.py punc_norm,
 * tokenizer.py MTLTokenizer) and the BPE on the tiny tokenizer.json of the export's format
 * (fixtures/chatterbox-tiny, written by scripts/make-tiny-chatterbox.py). The real tokenizer.json
 * could not be read here (fixtures/chatterbox-signature.json says why); the expected ids below are
 * worked out by hand from the tiny file's vocab and merge ranks:
 *   vocab: [STOP] 0, [UNK] 1, [SPACE] 2, a..z 3..28, "." 29, "," 30, "'" 31, he 32, ll 33,
 *          hell 34, hello 35, or 36, wor 37, ld 38, U+0301 39, [START] 255; added [en] 40, [es] 41, [ko] 42
 *   merges by rank: h e, l l, he ll, hell o, o r, w or, l d
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BpeTokenizer, chatterboxLanguage, koreanNormalize, prepareChatterboxText, puncNorm } from './engines/chatterbox-text.js';

const TOKENIZER = path.join(fileURLToPath(new URL('../fixtures/chatterbox-tiny/', import.meta.url)), 'tokenizer.json');

describe('Chatterbox text preparation (mtl_tts.py punc_norm + MTLTokenizer.encode)', () => {
  it('punc_norm: capital first letter, spaces collapsed, uncommon punctuation replaced, a full stop where no ending punctuation', () => {
    expect(puncNorm('hello   world')).toBe('Hello world.');
    expect(puncNorm('wait... what; really: yes – no')).toBe('Wait,  what,  really, yes - no.');
    expect(puncNorm('“Quoted” ‘single’ end!')).toBe('"Quoted" \'single\' end!');
    expect(puncNorm('a , b')).toBe('A, b.');
    expect(puncNorm('你好。')).toBe('你好。');
    expect(puncNorm('')).toBe('You need to add some text for me to talk.');
  });

  it('lowercase, NFKD, [lang] prefix and spaces as [SPACE]; Korean syllables as Jamo; the steps not ported are reported', () => {
    expect(prepareChatterboxText('Hello, World', 'en')).toEqual({ text: '[en]hello,[SPACE]world.' });
    expect(prepareChatterboxText('Está aquí', 'es').text).toBe('[es]esta\u0301[SPACE]aqui\u0301.');
    expect(koreanNormalize('한')).toBe('\u1112\u1161\u11ab');
    expect(koreanNormalize('가')).toBe('\u1100\u1161');
    expect(prepareChatterboxText('한 가', 'ko').text).toBe('[ko]\u1112\u1161\u11ab[SPACE]\u1100\u1161.');
    expect(prepareChatterboxText('привет', 'ru').skipped).toMatch(/stress/);
    expect(prepareChatterboxText('你好', 'zh').skipped).toMatch(/Cangjie/);
    expect(() => prepareChatterboxText('x', 'xx')).toThrow(/does not speak/);
    expect(chatterboxLanguage('pt-BR')).toBe('pt');
    expect(chatterboxLanguage('es-MX')).toBe('es');
    expect(chatterboxLanguage('ca-ES')).toBeUndefined();
  });
});

describe('BPE of a tokenizer.json (tokenizers format, the export\'s template)', () => {
  const tok = BpeTokenizer.fromFile(TOKENIZER);

  it('merges by rank within each Whitespace pre-token, added tokens split out first, template wraps the text', () => {
    // "[en]hello,[SPACE]world.": [en] | hello , | [SPACE] | world .
    // hello: h e -> he (0); l l -> ll (1); he ll -> hell (2); hell o -> hello (3)
    // world: o r -> or (4); w or -> wor (5); l d -> ld (6)
    expect(tok.encodeText('[en]hello,[SPACE]world.').ids).toEqual([40, 35, 30, 2, 37, 38, 29]);
    expect(tok.encode(prepareChatterboxText('Hello, World', 'en').text)).toEqual({ ids: [6563, 255, 40, 35, 30, 2, 37, 38, 29, 0, 6561, 6561], unknown: [] });
    // "hell" before "o" and "ll" only where the ranks allow: "hellhe" -> hell + he
    expect(tok.encodeText('hellhe').ids).toEqual([34, 32]);
    // "lll": the lowest rank merges the first pair, the rest stays
    expect(tok.encodeText('lll').ids).toEqual([33, 14]);
  });

  it('NFKD marks stay in the word (Unicode \\w as the Whitespace pre-tokenizer); symbols outside the vocab become [UNK]', () => {
    // "esta" + U+0301: no merges -> e s t a U+0301
    expect(tok.encodeText(prepareChatterboxText('Está', 'es').text).ids).toEqual([41, 7, 21, 22, 3, 39, 29]);
    // ñ -> n + U+0303 (not in the vocab)
    const r = tok.encodeText(prepareChatterboxText('año', 'es').text);
    expect(r.ids).toEqual([41, 3, 16, 1, 17, 29]);
    expect(r.unknown).toEqual(['\u0303']);
    expect(tok.addedId('[SPACE]')).toBe(2);
  });

  it('refuses tokenizer files it would read wrongly', () => {
    const base = { model: { type: 'BPE', vocab: { a: 0 }, merges: [] } };
    expect(() => new BpeTokenizer({ model: { type: 'WordPiece' } } as never)).toThrow(/not a BPE/);
    expect(() => new BpeTokenizer({ ...base, pre_tokenizer: { type: 'ByteLevel' } })).toThrow(/ByteLevel is not supported/);
    expect(() => new BpeTokenizer({ ...base, normalizer: { type: 'Lowercase' } })).toThrow(/normalizer/);
    expect(() => new BpeTokenizer({ ...base, post_processor: { type: 'ByteLevel' } })).toThrow(/post_processor/);
  });
});
