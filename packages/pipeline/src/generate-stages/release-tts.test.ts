/**
 * DUB_KEEP_MODELS=0 (`dub run`'s default): the generation releases the sessions its synthesis
 * loaded once the speech timeline is rendered (release-tts.ts), disposing the TTS engine first;
 * kept (`dub serve`, `dub worker`, DUB_KEEP_MODELS=1) they stay for the next job. The engine
 * records still name each released model's provider. A tiny ONNX fixture stands in for Kokoro.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger, type JobRuntime, type Transcript, type VersionScript } from '@dub/core';
import { SessionCache } from '@dub/onnx';
import type { SynthesisResult } from '../generate-synthesis.js';
import { generationEngines } from './engines.js';
import { releaseSynthesisSessions, releaseTtsStage, sessionsLoadedBy } from './release-tts.js';
import type { GenerateState } from './state.js';

const MODEL = path.resolve(import.meta.dirname, '../../../asr/fixtures/speaker-embedding-tiny-test/embedding.onnx');
const caches: SessionCache[] = [];
afterEach(async () => {
  for (const c of caches.splice(0)) await c.disposeAll();
});

async function loaded(): Promise<SessionCache> {
  const c = new SessionCache({ threads: 1 });
  caches.push(c);
  await c.get(MODEL);
  return c;
}

describe('release-tts', () => {
  it('keeps the sessions unless DUB_KEEP_MODELS=0, and then disposes the engine before releasing them', async () => {
    for (const keep of [undefined, true]) {
      const c = await loaded();
      const calls: string[] = [];
      expect(await releaseSynthesisSessions(keep, new Map(c.providers), c, async () => void calls.push('dispose'))).toBeUndefined();
      expect(c.size).toBe(1);
      expect(calls).toEqual([]);
    }
    const c = await loaded();
    const calls: string[] = [];
    const sessions = { release: async (f: string) => void calls.push(`release ${path.basename(f)}`, ...(await c.release(f), [])) };
    const released = await releaseSynthesisSessions(false, new Map(c.providers), sessions, async () => void calls.push('dispose'));
    expect(calls).toEqual(['dispose', 'release embedding.onnx']);
    expect(c.size).toBe(0);
    expect([...released!]).toEqual([[MODEL, 'cpu']]);
    // a later use loads it again
    await c.get(MODEL);
    expect(c.size).toBe(1);
  });

  it('as a stage: releases what the synthesis loaded (not what was loaded before it), and the engine record keeps its provider', async () => {
    const c = await loaded(); // loaded before the synthesis: not the synthesis's
    const other = path.resolve(import.meta.dirname, '../../../voice/fixtures/tiny-piper.onnx');
    let disposed = 0;
    const synth = {
      dispose: async () => void disposed++,
      ttsChoice: { id: 'piper', selected: 'auto', reason: 'auto', models: [] },
      engineId: 'piper',
      ttsModel: { file: other },
      ttsLabel: 'tiny',
      conversion: { id: 'none', selected: 'auto', reason: 'none', models: [] },
      conversionLabel: 'no voice conversion',
      ttsTerms: {},
      conversionTerms: {},
      transcript: { engines: {} } as unknown as Transcript,
      script: { engines: {} } as unknown as VersionScript,
      stretcher: 'atempo',
      segments: [],
    } as unknown as SynthesisResult;
    const rt = { sessions: c, config: { device: 'cuda', keepModels: false }, ctx: { logger: silentLogger } } as unknown as JobRuntime;
    // what the synthesis stage records: the sessions loaded while it ran
    const { value, loaded: synthSessions } = await sessionsLoadedBy(c, async () => (await c.get(other), 'spoken'));
    expect(value).toBe('spoken');
    expect([...synthSessions]).toEqual([[other, 'cpu']]);
    // as a GPU host would have it
    const state = { rt, synth, speechKey: 'k', synthSessions: new Map([[other, 'cuda' as const]]) } as unknown as GenerateState;
    const out = await releaseTtsStage.run(state);
    expect(disposed).toBe(1);
    expect([...c.providers.keys()]).toEqual([MODEL]);
    expect([...out.releasedSessions!.keys()]).toEqual([other]);
    // the record names the provider the released session had
    const engines = await generationEngines(rt, synth, undefined, out.releasedSessions);
    expect(engines.tts).toMatchObject({ id: 'piper', provider: 'cuda' });
    expect((await generationEngines(rt, synth, undefined)).tts!.provider).toBeUndefined();
    // kept: nothing released, nothing disposed
    const kept = await releaseTtsStage.run({ ...state, rt: { ...rt, config: { device: 'cpu' } } } as unknown as GenerateState);
    expect(kept).toEqual({});
    expect(disposed).toBe(1);
  });
});
