/**
 * Neural voice cloning (voice conversion) behind a small interface, for real hosts with a
 * tone-colour converter model (OpenVoice-style: a speaker embedding from a reference clip, then
 * conversion of synthesized speech from its own embedding to the reference's). No engine is
 * registered in this build: classical matching (VoiceMatcher: family, pitch and rate of the
 * speaker on espeak-ng) is what runs here.
 */
import type { StageContext } from '@dub/core';
import type { PlanarAudio } from '@dub/media';

export interface SpeakerEmbedding {
  /** Engine that produced it (embeddings of different engines do not mix). */
  engine: string;
  vector: Float32Array;
}

export interface VoiceCloner {
  readonly id: string;
  /** Sample rate the cloner works at (inputs are resampled to it by the caller). */
  readonly sampleRate: number;
  /** Speaker embedding of a reference clip (a few seconds of clean speech). */
  embed(reference: PlanarAudio, ctx: StageContext): Promise<SpeakerEmbedding>;
  /** `speech` (spoken by `source`) re-voiced as `target`, same length. */
  convert(speech: PlanarAudio, source: SpeakerEmbedding, target: SpeakerEmbedding, ctx: StageContext): Promise<PlanarAudio>;
  dispose(): Promise<void>;
}

/** Registered cloners by id (lazy factories); empty in this build. */
export const VOICE_CLONERS: Readonly<Record<string, () => Promise<VoiceCloner>>> = Object.freeze({});
