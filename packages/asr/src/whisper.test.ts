/**
 * Whisper plumbing on the tiny generated models (scripts/make-tiny-asr-models.py): same input and
 * output names and shapes as the real onnx-community exports, scripted logits.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveContext } from '@dub/core';
import { SessionCache } from '@dub/onnx';
import { asrConformance } from './testing/asr-conformance.js';
import { createEngineEnv } from './engine-env.js';
import { openSpeechAudio } from './speech-audio.js';
import { detectSpeech } from './vad/detect-speech.js';
import { transcribe } from './asr/transcribe.js';
import { detectLanguageFromEncoding, greedyDecode } from './whisper/decode.js';
import { createWhisper, loadWhisper } from './whisper/engine.js';
import { ASR_ENGINES } from './asr/registry.js';
import { resolveWhisperOptions } from './whisper/options.js';
import { tokensToSegments } from './whisper/segments.js';
import { applyTimestampRules } from './whisper/timestamp-rules.js';

import { describeWithMedia, itWithMedia, media } from '../../../test/support/media.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));
const sessions = new SessionCache();
const { env } = createEngineEnv({ sessions, models: { searchDirs: [FIXTURES] } }, resolveContext().logger);
const options = resolveWhisperOptions({ model: 'whisper-tiny-test' });
afterAll(() => sessions.disposeAll());

describe('whisper segments: a timestamp inside a word', () => {
  /** The tiny test tokenizer's tokens of `text` pieces and timestamps (seconds, as numbers). */
  async function tokensOf(parts: (string | number)[]) {
    const tok = (await loadWhisper(options, env)).tokenizer;
    let begin = 0;
    while (!tok.isTimestamp(begin)) begin++;
    const tokens = parts.flatMap((p) => (typeof p === 'number' ? [begin + Math.round(p * 50)] : tok.encode(p))).map((id) => ({ id, probability: 0.9 }));
    return { tok, tokens };
  }

  it('moves the rest of a split word to the line before, timed by its share of characters', async () => {
    // Whisper wrote "hellodub" across <|1.00|>: the second group starts with no space
    const { tok, tokens } = await tokensOf([0, ' hello', 1, 1, 'd', 'u', 'b', ' world', 2.5]);
    const segs = tokensToSegments(tok, tokens, 10, 30, 'es-ES');
    // "dub world": 3 of 9 characters of [11, 12.5] move, so the first line ends at 11.5
    expect(segs.map((s) => [s.start, s.end, s.text])).toEqual([
      [10, 11.5, 'hellodub'],
      [11.5, 12.5, 'world'],
    ]);
  });

  it('joins a whole group that is the rest of a word, and leaves space-led groups and unspaced scripts alone', async () => {
    const whole = await tokensOf([0, ' hello', 1, 1, 'd', 'u', 'b', 2.5]);
    expect(tokensToSegments(whole.tok, whole.tokens, 0, 30, 'en-US').map((s) => [s.start, s.end, s.text])).toEqual([[0, 2.5, 'hellodub']]);
    const spaced = await tokensOf([0, ' hello', 1, 1, ' world', 2.5]);
    expect(tokensToSegments(spaced.tok, spaced.tokens, 0, 30, 'en-US').map((s) => s.text)).toEqual(['hello', 'world']);
    // Japanese is written without spaces: every group starts without one, nothing moves
    expect(tokensToSegments(whole.tok, whole.tokens, 0, 30, 'ja-JP').map((s) => [s.start, s.end])).toEqual([
      [0, 1],
      [1, 2.5],
    ]);
  });
});

describe('whisper ONNX plumbing (tiny models)', () => {
  it('reads the layout from the sessions: 2 layers, 2 heads of 4, 80 mels', async () => {
    const w = await loadWhisper(options, env);
    expect(w.sessions.layout).toEqual({ layers: 2, heads: 2, headDim: 4 });
    expect(w.sessions.nMels).toBe(80);
  });

  it('runs the encoder on log-mel features: last_hidden_state [1, 1500, 8]', async () => {
    const w = await loadWhisper(options, env);
    const enc = await w.sessions.encode(w.features.extract(new Float32Array(16000)));
    expect(enc.dims).toEqual([1, 1500, 8]);
  });

  it('decodes greedily with a growing KV cache and the timestamp rules', async () => {
    const w = await loadWhisper(options, env);
    const enc = await w.sessions.encode(w.features.extract(new Float32Array(16000)));
    const out = await greedyDecode(w.sessions, w.tokenizer, enc, { language: 'de', timestamps: true, maxNewTokens: 50 });
    // Prompt of 3 tokens, then one more cached token per step.
    expect(out.cacheLengths).toEqual(Array.from({ length: out.tokens.length + 1 }, (_, i) => 3 + i));
    const tok = w.tokenizer;
    const text = out.tokens.map((t) => (tok.isTimestamp(t.id) ? `<${tok.timestampSeconds(t.id)}>` : tok.decode([t.id])));
    // The tiny model's raw argmax starts with text and later goes back to <|0.20|>: the rules turn those into <|0.00|> and <|1.00|>.
    expect(text).toEqual(['<0>', ' hello', ' world', '<1>', '<1>', ' ', 'd', 'u', 'b', '<2.5>']);
    for (const t of out.tokens) expect(t.probability).toBeGreaterThan(0.3);
    const segs = tokensToSegments(tok, out.tokens, 10, 30, 'de-DE');
    expect(segs.map((s) => [s.start, s.end, s.text])).toEqual([
      [10, 11, 'hello world'],
      [11, 12.5, 'dub'],
    ]);
    expect(segs[0]!.words.map((x) => [x.text, x.start, x.end])).toEqual([
      ['hello', 10, 10.5],
      ['world', 10.5, 11],
    ]);
  });

  it('without timestamps, decodes text only and makes one segment per window', async () => {
    const w = await loadWhisper(options, env);
    const enc = await w.sessions.encode(w.features.extract(new Float32Array(16000)));
    const out = await greedyDecode(w.sessions, w.tokenizer, enc, { language: 'de', timestamps: false, maxNewTokens: 5 });
    expect(out.tokens.every((t) => !w.tokenizer.isTimestamp(t.id))).toBe(true);
    expect(out.tokens.length).toBeLessThanOrEqual(5);
  });

  it('detects the language as the argmax language token after <|startoftranscript|>', async () => {
    const w = await loadWhisper(options, env);
    const enc = await w.sessions.encode(w.features.extract(new Float32Array(16000)));
    const g = await detectLanguageFromEncoding(w.sessions, w.tokenizer, enc);
    expect(g.language).toBe('de');
    expect(g.probability).toBeGreaterThan(0.9);
    expect([...g.probabilities.values()].reduce((a, b) => a + b, 0)).toBeCloseTo(1, 6);
  });

  it('timestamp rules: pairs, no going back, first token a timestamp within 1 s', () => {
    const tb = 100;
    const rules = { eot: 50, noTimestamps: 99, timestampBegin: tb };
    const fresh = () => new Float32Array(tb + 1501).fill(0);
    let l = fresh();
    applyTimestampRules(l, [], rules);
    expect(l[10]).toBe(-Infinity); // text
    expect(l[tb + 50]).toBe(0); // <|1.00|> allowed
    expect(l[tb + 51]).toBe(-Infinity); // past max initial timestamp
    l = fresh();
    applyTimestampRules(l, [tb + 10, 5, tb + 20], rules); // lone timestamp closes: no text next
    expect(l[5]).toBe(-Infinity);
    expect(l[tb + 19]).toBe(-Infinity);
    expect(l[tb + 20]).toBe(0);
    l = fresh();
    applyTimestampRules(l, [tb + 10, 5, tb + 20, tb + 20], rules); // a pair: text next
    expect(l[tb + 30]).toBe(-Infinity);
    expect(l[99]).toBe(-Infinity);
  });

  itWithMedia(['jfk.wav'], 'transcribe() picks whisper when its files resolve and offsets chunk times', async () => {
    const r = await transcribe(media('jfk.wav'), { locale: 'de-DE', models: { searchDirs: [FIXTURES] }, whisper: { model: 'whisper-tiny-test' }, sessions });
    expect(r.engine).toBe('whisper');
    expect(r.detectedLanguage?.language).toBe('de');
    const speech = r.speech!.regions;
    expect(r.segments[0]!.start).toBeCloseTo(speech[0]!.start, 3);
    expect(r.segments.map((s) => s.text)).toContain('hello world');
    for (const s of r.segments) expect(s.end).toBeLessThanOrEqual(11.01);
  });

  it('supports() needs both the language and the model files', async () => {
    const supports = async (locale: string, whisper: typeof options) => (await ASR_ENGINES.get('whisper').supports(locale, { ...env, engines: { whisper } })).ok;
    expect(await supports('de-DE', options)).toBe(true);
    expect(await supports('de-DE', resolveWhisperOptions({ model: 'whisper-absent' }))).toBe(false);
  });
});

describeWithMedia(['jfk.wav'], 'whisper conformance on jfk.wav', () => {
  asrConformance('whisper (tiny test model)', () => createWhisper(options, env), {
    audio: () => openSpeechAudio(media('jfk.wav')),
    regions: async () => (await detectSpeech(media('jfk.wav'))).regions,
    locale: 'de-DE',
    language: 'de',
    minWords: 1,
  });
});
