/**
 * The engine records of a generation (provenance, in the report and the version_generated event):
 * the script's engines (prepare's stages and translation) and this generation's: TTS, voice
 * conversion, the time stretch, and lips when the lips stage ran (its record, last).
 */
import { modelEngineRecord, type EngineRecord, type EngineRecords, type JobRuntime, type Transcript, type VersionScript } from '@dub/core';
import { stretchRecord, type SynthesisResult } from '../generate-synthesis.js';
import { translationLabel } from '../prepare-version.js';

export async function generationEngines(rt: JobRuntime, synth: SynthesisResult, lips: EngineRecord | undefined, released?: ReadonlyMap<string, 'cpu' | 'cuda'>): Promise<EngineRecords> {
  const { ttsChoice, engineId, ttsModel, ttsLabel, conversion, conversionLabel } = synth;
  // `released`: the sessions the generation released once the lines were spoken (release-tts.ts), with the provider each had
  const provider = (file: string) => rt.sessions.providers.get(file) ?? released?.get(file) ?? (rt.config.device === 'cpu' ? 'cpu' : undefined);
  const engines: EngineRecords = {
    ...scriptEngines(synth.transcript, synth.script),
    tts: ttsModel
      ? { ...(await modelEngineRecord(engineId, ttsModel.file, { label: ttsLabel, selected: ttsChoice.selected, reason: ttsChoice.reason, terms: synth.ttsTerms, provider: provider(ttsModel.file) })), ...(ttsChoice.passedOver ? { passed_over: ttsChoice.passedOver } : {}), ...(ttsChoice.notes?.length ? { notes: ttsChoice.notes } : {}) }
      : { id: engineId, label: ttsLabel, ...synth.ttsTerms, ...(ttsChoice.passedOver ? { passed_over: ttsChoice.passedOver } : {}), selected: ttsChoice.selected, reason: ttsChoice.reason, ...(ttsChoice.notes?.length ? { notes: ttsChoice.notes } : {}) },
    voice_conversion: conversion.models[0]
      ? { ...(await modelEngineRecord('openvoice', conversion.models[0].file, { label: conversionLabel, selected: conversion.selected, reason: conversion.reason, terms: synth.conversionTerms, provider: provider(conversion.models[0].file) })), files: conversion.models.map((f) => ({ name: f.model, sha256: f.sha256, size: f.size })) }
      : { id: 'none', label: conversionLabel, selected: conversion.selected, reason: conversion.reason },
    // lines fitted to their time: the pitch-preserving stretch filter this ffmpeg offers (no choice to configure)
    time_stretch: stretchRecord(synth.stretcher),
  };
  if (lips) engines.lips = lips;
  return engines;
}

/** The engines the transcript and the script record (a script made before scripts recorded theirs: its translation engine). */
function scriptEngines(transcript: Transcript, script: VersionScript): EngineRecords {
  return {
    ...transcript.engines,
    ...(script.engines ?? { translation: { id: script.translation_engine, label: translationLabel(script.translation_engine), selected: 'auto' } }),
  };
}
