/**
 * The m2m100 engine on the tiny stand-in (scripts/make-tiny-m2m100.py): the real export's input
 * and output names, ranks and dtypes (fixtures/m2m100-signature.json, read from Optimum's
 * exporter), a real SentencePiece model, and a scripted decoder: at absolute position p its logits
 * are 4 x one-hot(source token p) + 2 x one-hot(source token p + 1). After the forced language
 * token, greedy decoding therefore copies the source; beam search finds variants whose scores
 * this test computes on its own from that rule.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { SessionCache } from '@dub/onnx';
import { expectSignature, type Signature } from '../../../test/support/signature.js';
import { beamSearch, logSoftmax, topK, type BeamDecoder } from './engines/m2m100/beam-search.js';
import { M2M100Sessions } from './engines/m2m100/model.js';
import { M2M100Tokenizer } from './engines/m2m100/tokenizer.js';
import { createM2M100Translator, m2m100Installed, translateNBest, type M2M100Options } from './engines/m2m100/translator.js';
import { translatorConformance } from './testing/conformance.js';

const FIX = fileURLToPath(new URL('../fixtures/', import.meta.url));
const DIR = path.join(FIX, 'm2m100-tiny-test');
const sessions = new SessionCache();
afterAll(() => sessions.disposeAll());
const base: M2M100Options = { model: 'm2m100-tiny-test', searchDirs: [FIX], sessions, modelsDir: path.join(FIX, 'none') };
const tok = await M2M100Tokenizer.load(path.join(DIR, 'sentencepiece.bpe.model'), path.join(DIR, 'vocab.json'));
const V = tok.vocabSize;

/**
 * The stand-in's logits at decoder position p for source ids `src` padded to `padded` positions
 * (its rule, written out): positions clamp to the last padded one; padding is masked (adds nothing).
 */
function standInLogits(src: number[], p: number, padded = src.length): Float32Array {
  const l = new Float32Array(V);
  const add = (i: number, w: number) => {
    const j = Math.min(i, padded - 1);
    if (j < src.length) l[src[j]!]! += w;
  };
  add(p, 4);
  add(p + 1, 2);
  return l;
}
/** Sum of log-probabilities of generating `tokens` then </s> after [</s>, __tgt__] (positions 1, 2, ...). */
function standInLogprob(src: number[], tokens: number[], padded = src.length): number {
  let s = 0;
  [...tokens, 2].forEach((t, i) => (s += logSoftmax(standInLogits(src, i + 1, padded))[t]!));
  return s;
}

describe('m2m100 stand-in: the public export signature', () => {
  const sig = JSON.parse(fs.readFileSync(path.join(FIX, 'm2m100-signature.json'), 'utf8')) as Signature & { real: Record<string, number> };
  it('names its sources (Optimum exporter, the model config, the export)', () => {
    expect(sig.source).toEqual(expect.arrayContaining([expect.stringMatching(/^https:\/\/github\.com\/huggingface\/optimum\//), expect.stringMatching(/Xenova\/m2m100_418M/)]));
    expect(sig.real).toMatchObject({ layers: 12, heads: 16, headDim: 64, vocab: 128112 });
  });
  it('encoder and merged decoder have exactly those inputs and outputs', async () => {
    expectSignature((await sessions.get(path.join(DIR, 'encoder_model_quantized.onnx'))).session, sig.files['encoder_model_quantized.onnx']!, 'encoder');
    expectSignature((await sessions.get(path.join(DIR, 'decoder_model_merged_quantized.onnx'))).session, sig.files['decoder_model_merged_quantized.onnx']!, 'decoder');
  });
  it('a model without the export\'s names is refused with what is missing', async () => {
    const enc = await sessions.get(path.join(DIR, 'encoder_model_quantized.onnx'));
    expect(() => new M2M100Sessions(enc, enc)).toThrow(/not an M2M100 merged decoder in Optimum's layout: missing input encoder_attention_mask/);
  });
});

describe('m2m100 decoding on the stand-in', () => {
  it('reads the layout and grows the KV cache by one token per step', async () => {
    const s = new M2M100Sessions(await sessions.get(path.join(DIR, 'encoder_model_quantized.onnx')), await sessions.get(path.join(DIR, 'decoder_model_merged_quantized.onnx')));
    expect(s.layout).toEqual({ layers: 2, heads: 2, headDim: 4 });
    const src = tok.encode('The quick brown fox.', 'en');
    const enc = await s.encode([src, tok.encode('x', 'en')]);
    expect([enc.batch, enc.length, enc.dModel]).toEqual([2, src.length, V]);
    const { decoder, logits } = await s.start(enc, 0, [2, tok.langId('es')]);
    expect(decoder.pastLength).toBe(2);
    expect(Array.from(logits)).toEqual(Array.from(standInLogits(src, 1)));
    const next = await decoder.step([src[1]!, src[1]!], [0, 0]);
    expect(decoder.pastLength).toBe(3);
    expect(next.length).toBe(2);
    expect(Array.from(next[1]!)).toEqual(Array.from(standInLogits(src, 2)));
  });

  it('gives each beam the cache of the hypothesis it continues (rows picked, encoder cache kept)', async () => {
    const s = new M2M100Sessions(await sessions.get(path.join(DIR, 'encoder_model_quantized.onnx')), await sessions.get(path.join(DIR, 'decoder_model_merged_quantized.onnx')));
    const enc = await s.encode([tok.encode('Open the studio.', 'en')]);
    const { decoder } = await s.start(enc, 0, [2, tok.langId('de')]);
    await decoder.step([10, 20], [0, 0]); // two beams from the prompt: row 0 fed 10, row 1 fed 20
    const k = 'past_key_values.0.decoder.key';
    const before = [decoder.cacheRow(k, 0), decoder.cacheRow(k, 1)];
    const encBefore = decoder.cacheRow('past_key_values.1.encoder.value', 0);
    await decoder.step([30, 40, 50], [1, 0, 1]); // three beams: continuing rows 1, 0 and 1
    expect(decoder.pastLength).toBe(4);
    // per head [P, 4]: the first 3 positions of each new row are the old row's 3 positions
    const head = (row: Float32Array, h: number, upto: number) => Array.from(row.subarray(h * upto * 4, h * upto * 4 + 3 * 4));
    for (const [now, was] of [[0, 1], [1, 0], [2, 1]] as const) {
      for (const h of [0, 1]) expect(head(decoder.cacheRow(k, now), h, 4)).toEqual(head(before[was]!, h, 3));
    }
    // the newest position holds the token fed to that row (30 and 50 differ, 50 in rows 2 only)
    const last = (row: Float32Array) => Array.from(row.subarray(3 * 4, 4 * 4));
    expect(last(decoder.cacheRow(k, 0))).not.toEqual(last(decoder.cacheRow(k, 2)));
    for (const r of [0, 1, 2]) expect(Array.from(decoder.cacheRow('past_key_values.1.encoder.value', r))).toEqual(Array.from(encBefore));
  });

  it('greedy (1 beam) copies the source after the forced language token, padding ignored', async () => {
    const t = createM2M100Translator({ ...base, beams: 1 });
    const texts = ['The quick brown fox jumps over the lazy dog.', 'Ça va très bien.', '¿Dónde está la estación?'];
    const out = await t.nBestMany(texts, 'en-US', 'es-ES', 1);
    const padded = Math.max(...texts.map((x) => tok.encode(x, 'en').length));
    for (const [i, text] of texts.entries()) {
      const src = tok.encode(text, 'en');
      expect(out[i]![0]!.tokens).toEqual(src.slice(1, -1));
      expect(out[i]![0]!.text).toBe(text);
      expect(out[i]![0]!.finished).toBe(true);
      expect(out[i]![0]!.logprob).toBeCloseTo(standInLogprob(src, src.slice(1, -1), padded), 4);
    }
  });

  it('beam search returns an n-best list ordered by length-normalised score, checked against the rule', async () => {
    const t = createM2M100Translator({ ...base, beams: 4 });
    const text = 'Open the studio.';
    const src = tok.encode(text, 'en');
    const nbest = await translateNBest(t, { sourceLocale: 'en-US', targetLocale: 'fr-FR', text }, 4);
    expect(nbest.length).toBe(4);
    expect(nbest[0]!.text).toBe(text);
    expect(new Set(nbest.map((h) => h.text)).size).toBe(4);
    for (const h of nbest) {
      expect(h.logprob).toBeCloseTo(standInLogprob(src, h.tokens), 4);
      expect(h.score).toBeCloseTo(h.logprob / (h.tokens.length + 1), 6);
    }
    for (let i = 1; i < nbest.length; i++) expect(nbest[i]!.score).toBeLessThanOrEqual(nbest[i - 1]!.score);
  });

  it('is equal to an exhaustive search on a small problem (beam search finds the best)', async () => {
    // a 3-token vocabulary decoder: token 2 ends; logits fixed per step
    const table = [[0.1, 2, 0.5], [1.5, 0.2, 1.4], [0.3, 0.1, 2.2], [0, 0, 5]].map((r) => Float32Array.from(r));
    let len = 0;
    const dec: BeamDecoder = { step: async (tokens) => { len++; return tokens.map(() => table[Math.min(len, 3)]!); } };
    const hyps = await beamSearch(dec, table[0]!, { beams: 3, maxNewTokens: 3, eosId: 2, nBest: 3 });
    // exhaustive over sequences of at most 3 tokens of {0,1} then </s> (or cut at 3)
    const all: { tokens: number[]; score: number }[] = [];
    const walk = (tokens: number[], lp: number) => {
      const l = logSoftmax(table[Math.min(tokens.length, 3)]!);
      all.push({ tokens, score: (lp + l[2]!) / (tokens.length + 1) });
      if (tokens.length < 2) for (const t of [0, 1]) walk([...tokens, t], lp + l[t]!);
    };
    walk([], 0);
    all.sort((a, b) => b.score - a.score);
    expect(hyps[0]!.tokens).toEqual(all[0]!.tokens);
    expect(hyps[0]!.score).toBeCloseTo(all[0]!.score, 6);
    expect(topK(Float64Array.from([1, 3, 2, 3]), 3)).toEqual([1, 3, 2]);
  });

  it('supports(): covered pairs when installed, honest reasons otherwise', async () => {
    const t = createM2M100Translator(base);
    expect(await t.supports('en-US', 'de-DE')).toEqual({ supported: true });
    expect(await t.supports('fil-PH', 'nb-NO')).toEqual({ supported: true });
    expect((await t.supports('en-US', 'yue-CN')).reason).toMatch(/no Cantonese/);
    expect((await t.supports('es-ES', 'es-MX')).reason).toMatch(/one language for M2M100 \(es\)/);
    const missing = await createM2M100Translator({ modelsDir: path.join(FIX, 'none'), searchDirs: [path.join(FIX, 'none')] }).supports('en-US', 'de-DE');
    expect(missing.supported).toBe(false);
    expect(missing.fix).toMatch(/^npx dub models fetch m2m100-418m/);
  });
});

translatorConformance('m2m100 (stand-in)', {
  create: ({ maxBatchSegments }) => ({ translator: createM2M100Translator({ ...base, beams: 2, maxBatchSegments }), sourceLocale: 'en-US', targetLocale: 'de-DE' }),
  // the stand-in copies: a "translation" is the source as SentencePiece gives it back
  looksTranslated: (source, translated) => translated === source.replace(/\s+/g, ' ').trim(),
  lines: ['The quick brown fox.', 'Ask not what your country can do.', 'The only thing we have to fear.', 'Open the studio.', 'Numbers: 1, 2, 3.'],
});

describe('m2m100 nbest() (the optional Translator.nbest shape)', () => {
  it('gives up to n distinct texts per segment, best first, the first equal to translate(), glossary applied to each', async () => {
    const t = createM2M100Translator({ ...base, beams: 3 });
    const request = {
      sourceLocale: 'en-US',
      targetLocale: 'de-DE',
      segments: [{ id: 'a', text: 'Open the studio.' }, { id: 'b', text: '  ' }, { id: 'c', text: 'Ask not what your country can do.' }],
      glossary: [{ term: 'studio', translation: 'Atelier' }],
    };
    const nb = await t.nbest(request, 3);
    expect(nb.map((x) => x.id)).toEqual(['a', 'b', 'c']);
    expect(nb[1]!.texts).toEqual(['']);
    const best = await t.translate(request);
    expect(nb.map((x) => x.texts[0])).toEqual(best.map((x) => x.text));
    // the copy model carries the placeholder through; it becomes the term's translation
    expect(nb[0]!.texts[0]).toBe('Open the Atelier.');
    // the raw alternatives of the masked line break the placeholder ("Zxqa.." ...): those are left out
    const raw = await t.nBest('Open the Zxqaa.', 'en-US', 'de-DE', 3);
    expect(raw.slice(1).some((h) => /zxq/i.test(h.text) && !h.text.includes('Zxqaa'))).toBe(true);
    for (const x of nb[0]!.texts) expect(x).not.toMatch(/zxq/i);
    // without a term, the alternatives come through, distinct
    expect(nb[2]!.texts.length).toBe(3);
    expect(new Set(nb[2]!.texts).size).toBe(3);
  });
});

const real = m2m100Installed();
describe('m2m100 on the real weights (where installed)', () => {
  it.skipIf(!real)(`translates en-US -> fr-FR and de-DE -> es-ES plausibly, n-best distinct${real ? '' : ' [skipped: m2m100-418m is not installed here (npx dub models fetch m2m100-418m)]'}`, async () => {
    const t = createM2M100Translator({ sessions });
    const [fr] = await t.translate({ sourceLocale: 'en-US', targetLocale: 'fr-FR', segments: [{ id: 'a', text: 'Thank you very much.' }] });
    expect(fr!.text.toLowerCase()).toContain('merci');
    const [es] = await t.translate({ sourceLocale: 'de-DE', targetLocale: 'es-ES', segments: [{ id: 'a', text: 'Guten Morgen!' }] });
    expect(es!.text.toLowerCase()).toMatch(/buen/);
    const nb = await t.nBest('The weather is nice today.', 'en-US', 'it-IT', 3);
    expect(new Set(nb.map((h) => h.text)).size).toBe(3);
  }, 120_000);
});
