import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ModelError, resolveContext } from '@dub/core';
import { SessionCache } from '@dub/onnx';
import { createEngineEnv } from './engine-env.js';
import { compressionRatio, decodeWindow, decodeWithFallback, suppressTokenIds, type WindowDecoder } from './whisper/decode.js';
import { loadWhisper, resolveWhisperFiles, resolveWhisperMels } from './whisper/engine.js';
import { resolveWhisperOptions } from './whisper/options.js';
import { WhisperTokenizer } from './whisper/tokenizer.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));
const TINY = path.join(FIXTURES, 'whisper-tiny-test');
const sessions = new SessionCache();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'whisper-mels-'));
afterAll(async () => {
  await sessions.disposeAll();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** A Whisper model folder: the tiny decoder and tokenizer, `encoder` as encoder_model.onnx, optionally a preprocessor_config.json. */
function modelDir(name: string, encoder: string, featureSize?: number): string {
  const dir = path.join(tmp, name);
  fs.mkdirSync(dir, { recursive: true });
  fs.copyFileSync(encoder, path.join(dir, 'encoder_model.onnx'));
  for (const f of ['decoder_model_merged.onnx', 'tokenizer.json']) fs.copyFileSync(path.join(TINY, f), path.join(dir, f));
  if (featureSize !== undefined) fs.writeFileSync(path.join(dir, 'preprocessor_config.json'), JSON.stringify({ feature_extractor_type: 'WhisperFeatureExtractor', feature_size: featureSize, sampling_rate: 16000 }));
  return dir;
}
const ANY_MELS = path.join(FIXTURES, 'whisper-tiny-anymels-test', 'encoder_model.onnx');
const { env } = createEngineEnv({ sessions, models: { searchDirs: [tmp] } }, resolveContext().logger);

describe('Whisper mel bins come from the model config', () => {
  it('128 bins from preprocessor_config.json feature_size (large-v3, turbo): features and encoder run at 128', async () => {
    modelDir('whisper-128', ANY_MELS, 128);
    const w = await loadWhisper(resolveWhisperOptions({ model: 'whisper-128' }), env);
    expect(w.sessions.nMels).toBe(128);
    const feats = w.features.extract(new Float32Array(16000));
    expect(feats.length).toBe(128 * 3000);
    expect((await w.sessions.encode(feats)).dims).toEqual([1, 1500, 8]);
  });

  it('a model whose encoder leaves the size open and that has no config fails naming the fix', async () => {
    modelDir('whisper-unknown', ANY_MELS);
    const err = await loadWhisper(resolveWhisperOptions({ model: 'whisper-unknown' }), env).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelError);
    expect((err as Error).message).toMatch(/cannot tell how many mel bins.*preprocessor_config\.json \(feature_size\).*"mels".*whisper\.nMels/);
  });

  it("the manifest entry's mels serve when the config is absent; a fixed encoder that disagrees with the config fails", async () => {
    const dir = modelDir('whisper-base', ANY_MELS);
    const o = resolveWhisperOptions({ model: 'whisper-base' });
    const files = resolveWhisperFiles(o, env);
    expect(path.dirname(files.encoder)).toBe(dir);
    expect(resolveWhisperMels(o, files, await sessions.get(files.encoder))).toBe(80);
    modelDir('whisper-fixed80', path.join(TINY, 'encoder_model.onnx'), 128);
    await expect(loadWhisper(resolveWhisperOptions({ model: 'whisper-fixed80' }), env)).rejects.toThrow(/takes 80 mel bins, but .*preprocessor_config\.json says 128/);
    expect(() => resolveWhisperOptions({ nMels: 0 })).toThrow(/nMels must be an integer/);
  });
});

// ---------------------------------------------------------------- decoding safeguards
const tok = WhisperTokenizer.fromFile(path.join(TINY, 'tokenizer.json'));
const V = tok.vocabSize;
const id = (t: string): number => tok.encode(t)[0]!;
const HELLO = tok.encode(' hello');
const fakeEncoded = {} as Parameters<WindowDecoder['startDecoding']>[0];

/** A decoder whose logits are a function of the tokens generated so far; position 0 of the prompt gives `sot`. */
function scripted(next: (generated: number[]) => Record<number, number>, sot: Record<number, number> = {}, base = 0): WindowDecoder {
  const row = (entries: Record<number, number>) => {
    const x = new Float32Array(V).fill(base);
    for (const [k, v] of Object.entries(entries)) x[Number(k)] = v;
    return x;
  };
  return {
    startDecoding() {
      const generated: number[] = [];
      let promptLen = 0;
      return {
        pastLength: 0,
        async step(ids: readonly number[]) {
          if (promptLen === 0) promptLen = ids.length;
          else generated.push(...ids);
          this.pastLength += ids.length;
          return row(next(generated));
        },
        positionLogits: (p: number) => (p === 0 ? row(sot) : new Float32Array(V)),
      };
    },
  };
}
const opts = { language: 'de', timestamps: false, maxNewTokens: 30 } as const;

describe('Whisper decoding safeguards (openai/whisper decoding.py, transcribe.py)', () => {
  it("suppresses openai's non-speech tokens and the special tokens, never letters", () => {
    const ids = suppressTokenIds(tok);
    for (const s of ['(', '[', '"', '#', '♪']) expect(ids).toContain(id(s));
    for (const s of ['a', 'd', '.', ',', '?']) expect(ids).not.toContain(id(s));
    for (const t of [tok.transcribe, tok.translate, tok.sot, tok.sotPrev!, tok.sotLm!, tok.noSpeech!]) expect(ids).toContain(t);
    expect(suppressTokenIds(tok, [5])).toEqual([5, tok.sot, tok.translate, tok.transcribe, tok.sotLm!, tok.sotPrev!, tok.noSpeech!].sort((a, b) => a - b));
  });

  it('a blank or the end cannot come first; a suppressed "(" or "♪" is never sampled', async () => {
    const dec = scripted((g) => (g.length === 0 ? { [id(' ')]: 9, [tok.eot]: 8, [id('o')]: 5 } : g.length === 1 ? { [id('(')]: 9, [id('♪')]: 8.5, [id('k')]: 5 } : { [tok.eot]: 9 }), {}, -5);
    const r = await decodeWindow(dec, tok, fakeEncoded, { ...opts, suppress: suppressTokenIds(tok) });
    expect(tok.decode(r.tokens.map((t) => t.id))).toBe('ok');
    const raw = await decodeWindow(dec, tok, fakeEncoded, { ...opts, suppressBlank: false });
    expect(tok.decode(raw.tokens.map((t) => t.id))).toBe(' ('); // without the filters
  });

  it('reports avg log probability over tokens + 1 (the end included), no-speech probability at <|startoftranscript|> and the compression ratio', async () => {
    const dec = scripted((g) => (g.length < 2 ? { [HELLO[0]!]: 10 } : { [tok.eot]: 10 }), { [tok.noSpeech!]: Math.log(V) + 3 });
    const r = await decodeWindow(dec, tok, fakeEncoded, opts);
    expect(r.text).toBe('hello hello');
    // without timestamps every id above <|endoftext|> is -Infinity; at the first step the blank and the end too
    const N = tok.eot;
    const first = 10 - Math.log(Math.exp(10) + (N - 2));
    const later = 10 - Math.log(Math.exp(10) + N);
    expect(r.avgLogprob).toBeCloseTo((first + 2 * later) / 3, 5);
    expect(r.noSpeechProbability).toBeCloseTo(Math.exp(Math.log(V) + 3) / (Math.exp(Math.log(V) + 3) + V - 1), 4);
    expect(r.compressionRatio).toBeCloseTo(compressionRatio('hello hello'), 9);
    expect(compressionRatio('la '.repeat(40))).toBeGreaterThan(2.4);
  });

  it('a loop (compression ratio > 2.4) is decoded again at a higher temperature, deterministically', async () => {
    // " hello" always just ahead of the end: greedy repeats it until the token limit
    const dec = scripted(() => ({ [HELLO[0]!]: 5, [tok.eot]: 4.9 }), {}, -20);
    const greedy = await decodeWindow(dec, tok, fakeEncoded, opts);
    expect(greedy.compressionRatio).toBeGreaterThan(2.4);
    const r = await decodeWithFallback(dec, tok, fakeEncoded, { ...opts, seed: 3 });
    expect(r.tried).toEqual([0, 0.2]);
    expect(r.temperature).toBe(0.2);
    expect(r.compressionRatio).toBeLessThanOrEqual(2.4);
    expect(r.tokens.length).toBeLessThan(greedy.tokens.length);
    expect((await decodeWithFallback(dec, tok, fakeEncoded, { ...opts, seed: 3 })).tokens).toEqual(r.tokens);
  });

  it('invented text on noise (no-speech probability > 0.6, avg log probability < -1) is silence: no fallback, the window is skipped', async () => {
    // flat logits: every text token is a guess; <|nocaptions|> likely at <|startoftranscript|>
    const noise = scripted((g) => (g.length < 8 ? { [id('a') + (g.length % 5)]: 0.5 } : { [tok.eot]: 0.5 }), { [tok.noSpeech!]: Math.log(V) + 2 });
    const r = await decodeWithFallback(noise, tok, fakeEncoded, opts);
    expect(r.noSpeechProbability!).toBeGreaterThan(0.6);
    expect(r.avgLogprob).toBeLessThan(-1);
    expect(r.tried).toEqual([0]);
    expect(r.silent).toBe(true);
    // the same no-speech probability with confident text is kept
    const confident = scripted((g) => (g.length < 2 ? { [HELLO[0]!]: 15 } : { [tok.eot]: 15 }), { [tok.noSpeech!]: Math.log(V) + 2 });
    expect((await decodeWithFallback(confident, tok, fakeEncoded, opts)).silent).toBe(false);
  });

  it('unlikely text without a no-speech signal falls back through every temperature and keeps the most likely result, not the last', async () => {
    const unsure = scripted((g) => (g.length < 6 ? { [id('a') + (g.length % 5)]: 0.5 } : { [tok.eot]: 0.5 }));
    const r = await decodeWithFallback(unsure, tok, fakeEncoded, { ...opts, bestOf: 2 });
    expect(r.tried).toEqual([0, 0.2, 0.4, 0.6, 0.8, 1]);
    expect(r.allFailed).toBe(true);
    // the greedy text takes the 0.5 logits every step; sampling these nearly flat logits mostly draws tokens at 0
    expect(r.temperature).toBe(0);
    expect(r.silent).toBe(false);
  });
});

describe('the Whisper engine skips windows judged silent and says so', () => {
  it('lists each skipped window with its numbers in skippedWindows and transcribes nothing there', async () => {
    const { createWhisper } = await import('./whisper/engine.js');
    const { openSpeechAudio } = await import('./speech-audio.js');
    const tinyEnv = createEngineEnv({ sessions, models: { searchDirs: [FIXTURES] } }, resolveContext().logger).env;
    const audio = await openSpeechAudio({ samples: new Float32Array(16000 * 4), sampleRate: 16000 });
    const request = { locale: 'de-DE', language: 'de', regions: [{ start: 0.5, end: 3.5 }] };
    try {
      // thresholds that make every window silence: no-speech probability above 0, log probability not above 0
      const strict = await createWhisper(resolveWhisperOptions({ model: 'whisper-tiny-test', detectLanguage: false, noSpeechThreshold: 0, logprobThreshold: 0 }), tinyEnv);
      const skipped = await strict.transcribe(audio, request, resolveContext());
      expect(skipped.segments).toEqual([]);
      expect(skipped.skippedWindows).toHaveLength(1);
      expect(skipped.skippedWindows![0]).toMatchObject({ start: 0.5, end: 3.5, temperature: 0 });
      expect(skipped.skippedWindows![0]!.noSpeechProbability).toBeGreaterThan(0);
      // the defaults keep the tiny model's confident text
      const normal = await createWhisper(resolveWhisperOptions({ model: 'whisper-tiny-test', detectLanguage: false }), tinyEnv);
      const kept = await normal.transcribe(audio, request, resolveContext());
      expect(kept.skippedWindows).toBeUndefined();
      expect(kept.segments.map((s) => s.text)).toContain('hello world');
    } finally {
      await audio.close();
    }
  });
});

describe('bounded decoding (maxTokensPerSecond)', () => {
  it('bounds a chunk by its length, never above maxNewTokens; unset, maxNewTokens alone', async () => {
    const { maxNewTokensFor } = await import('./whisper/options.js');
    expect(maxNewTokensFor(resolveWhisperOptions(), 3)).toBe(224);
    expect(maxNewTokensFor(resolveWhisperOptions({ maxTokensPerSecond: 15 }), 2)).toBe(38);
    expect(maxNewTokensFor(resolveWhisperOptions({ maxTokensPerSecond: 15 }), 30)).toBe(224);
    expect(maxNewTokensFor(resolveWhisperOptions({ maxTokensPerSecond: 15, maxNewTokens: 20 }), 2)).toBe(20);
    expect(() => resolveWhisperOptions({ maxTokensPerSecond: 0 })).toThrow(/maxTokensPerSecond must be a number > 0/);
    expect(() => resolveWhisperOptions({ maxNewTokens: 0 })).toThrow(/maxNewTokens must be an integer >= 1/);
  });
});
