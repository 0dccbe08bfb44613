/**
 * SPEAKER_ENGINES: each entry says the embedding kind its engine computes, and the kind table and
 * createSpeakerEmbedding read it from there (no second table of ids to kinds).
 */
import { engineContractProblems } from '@dub/core';
import { describe, expect, it } from 'vitest';
import { resolveMfccStatsOptions } from './speakers/mfcc-stats.js';
import { createSpeakerEmbedding, SPEAKER_EMBEDDING_KIND, SPEAKER_ENGINES } from './speakers/registry.js';

describe('speaker engines: the entry owns its embedding kind', () => {
  it('each entry names its kind; SPEAKER_EMBEDDING_KIND is read from the entries', () => {
    expect(SPEAKER_ENGINES.entries.map((e) => [e.id, e.embedding])).toEqual([['wespeaker', 'onnx'], ['mfcc', 'mfcc']]);
    expect(SPEAKER_EMBEDDING_KIND).toEqual({ wespeaker: 'onnx', mfcc: 'mfcc' });
    expect(SPEAKER_ENGINES.get('wespeaker').embedding).toBe('onnx');
  });

  it('createSpeakerEmbedding builds the engine of a kind through its entry; an unknown kind is a ValidationError', async () => {
    const engine = await createSpeakerEmbedding('mfcc', { mfcc: resolveMfccStatsOptions() }, {} as never);
    expect(engineContractProblems(engine)).toEqual([]);
    expect(engine.label).toBe('MFCC statistics');
    // one second of a 220 Hz tone: a vector of the engine's dimension, finite
    const tone = Float32Array.from({ length: 16000 }, (_, i) => 0.3 * Math.sin((2 * Math.PI * 220 * i) / 16000));
    const v = await engine.embed(tone);
    expect(v.length).toBe(engine.dimension);
    expect(v.every(Number.isFinite)).toBe(true);
    await engine.dispose();
    await expect(createSpeakerEmbedding('xvector' as never, {} as never, {} as never)).rejects.toMatchObject({ code: 'validation_error', message: '"xvector" is not a speaker embedding: onnx, mfcc' });
  });
});
