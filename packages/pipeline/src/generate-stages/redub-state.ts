/**
 * The re-dub state of a generation (../redub-state.ts), written once the report is: what the
 * next generation updates its mix, AAC chunks and loudness from, outside the result prefix
 * (revise keeps it); then what no live state needs any more is collected. A failed collection
 * leaves the blobs for the next generation and does not fail this one. No progress share.
 */
import { collectRedubState, writeRedubState, type MixState, type RedubCollection } from '../redub-state.js';
import { unweightedStage } from '../pipeline-stage.js';
import type { GenerateStage } from './state.js';

export const redubStateStage: GenerateStage = unweightedStage({
  name: 'redub-state',
  inputs: ['synth', 'speechKey', 'mixed', 'audio', 'audioKey', 'quality', 'normalization'],
  async run(s) {
    const { rt, opts } = s;
    const { assetId, versionId, generation } = s.job;
    const mixed = s.mixed!;
    const audio = s.audio!;
    const quality = s.quality!;
    const mix: MixState = {
      mix: mixed.files['mix.wav']!,
      speech: s.speechKey!,
      gainDb: mixed.value.gainDb,
      hops: mixed.files['hops.f64'] ?? null,
      background: s.backgroundKey ?? null,
      duration: s.synth!.duration,
      ...(audio.value.identities ? { chunks: audio.value.identities } : {}),
      ...(quality.framePeaks ? { audio: s.audioKey!, chunkFrames: opts.audio.chunkFrames, framePeaks: quality.framePeaks, ...(quality.hopEnergies && quality.hop ? { hopEnergies: quality.hopEnergies, hop: quality.hop } : {}) } : {}),
    };
    await writeRedubState(rt.store, assetId, {
      v: 1,
      version_id: versionId,
      generation,
      mode: s.withLips ? 'with_lips' : 'no_lips',
      created_at: new Date().toISOString(),
      voice_over: s.voiceOver,
      normalization: s.normalization!,
      mix,
      aac_chunks: audio.value.identities?.hashes ?? null,
      // the lips chunk blobs the video is made of ([] without lips; null: not known)
      lips_chunks: s.withLips ? (s.lipsChunks ?? null) : [],
    });
    let collected: RedubCollection | undefined;
    try {
      collected = await collectRedubState(rt.store, assetId, { self: { versionId, generation }, logger: rt.ctx.logger });
    } catch (e) {
      rt.ctx.logger.warn({ err: e, asset_id: assetId }, 're-dub state collection failed; the blobs stay until the next generation collects');
    }
    return collected ? { collected } : {};
  },
});
