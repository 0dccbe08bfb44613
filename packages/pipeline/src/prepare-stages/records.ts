/**
 * The engine records a transcript carries (`engines`: separation, vad, asr, speakers; and
 * `speaker_engine`): which engine and model ran each stage, on which provider, chosen how and why.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { modelEngineRecord, recordTerms, type EngineRecord, type EngineRecords } from '@dub/core';
import type { KeptOutsideSpeech } from '@dub/separation';
import { sourceSrtNotes } from '@dub/srt';
import type { StageEngine } from '../engine-choice.js';
import { hasGiven } from './given-tracks.js';
import { providerOf, type PrepareState, type Provider } from './state.js';
import type { With } from './typed-stage.js';

/** What the records read of the state. */
export type RecordsState = With<
  PrepareState,
  'duration' | 'givenSpeech' | 'givenBackground' | 'separationEngine' | 'plan' | 'separated' | 'separationModel' | 'separationGraph' | 'vadEngine' | 'asr' | 'recognition' | 'speakerEngine' | 'speakers'
>;

/** The records of the stages that ran; `kept`: what the background keeps of the source outside speech. */
export async function engineRecords(state: RecordsState, kept: KeptOutsideSpeech | undefined): Promise<{ speakerRecord: EngineRecord; engines: EngineRecords }> {
  const { job, rt } = state.prep;
  const { duration, plan, separated, asr, recognition, speakerEngine } = state;
  const sepEngine = state.separationEngine;
  const sepGraph = state.separationGraph;
  const keptWords = kept ? `; the background is the source's audio outside speech (${kept.keptSeconds.toFixed(1)} of ${duration.toFixed(1)} s kept as it is, ${kept.replacedSeconds.toFixed(1)} s of speech replaced${plan?.mode === 'none' ? ' by silence' : " by the model's background"})` : '';
  const asrLabel = asr.record.label ?? asr.id;
  const speakerLabel = speakerEngine.record.label ?? speakerEngine.id;
  const speakerRecord: EngineRecord = speakerEngine.models[0]
    ? await modelEngineRecord(speakerEngine.id, speakerEngine.models[0].file, { label: speakerLabel, selected: speakerEngine.selected, reason: speakerEngine.reason, provider: state.speakers.value.provider, terms: recordTerms(speakerEngine.record) })
    : { id: speakerEngine.id, label: speakerLabel, selected: speakerEngine.selected, reason: speakerEngine.reason };
  const engines: EngineRecords = {
    separation: state.separationModel
      ? { ...sepEngine!.record, ...(separated.value.provider ? { provider: separated.value.provider } : {}), reason: `${sepEngine!.reason}; ${plan?.reason ?? 'the separation plan'}; ${sepGraph?.reason ?? 'whole graph'}${keptWords}` }
      : { id: separated.value.engine, label: separated.value.engine === 'given_tracks' ? 'given clean tracks' : separated.value.engine === 'none' ? 'no separation' : separated.value.engine, selected: sepEngine?.selected ?? 'auto', reason: hasGiven(state) ? 'clean tracks were given with the asset' : `${plan?.reason ?? 'no model ran'}${keptWords}` },
    vad: vadRecord(state.vadEngine, state.vadEngine.models[0] ? providerOf(rt, state.vadEngine.models[0].file) : undefined),
    asr: asr.models[0]
      ? { ...(await modelEngineRecord(recognition.value.engine, asr.models[0].file, { label: asrLabel, selected: asr.selected, reason: asr.reason, provider: recognition.value.provider, terms: recordTerms(asr.record) })), files: asr.models.map((m) => ({ name: m.model, sha256: m.sha256, size: m.size })), ...notesOf([...(whisperLanguageNotes(job.locale, recognition.value.engine, asrLabel, asr.models).notes ?? []), ...(recognition.value.runAs ?? [])]) }
      : { id: recognition.value.engine, label: asrLabel, selected: asr.selected, reason: asr.reason, ...sourceNotes(job.source_srt) },
    speakers: speakerRecord,
  };
  // No separation model because the model policy refused the installed ones: the record names them, and its reason says why.
  const sepPassed = sepEngine?.record.passed_over;
  if (sepPassed?.length && engines.separation?.id === 'none') {
    const why = engines.separation.reason ?? '';
    engines.separation = { ...engines.separation, passed_over: sepPassed, reason: why.startsWith(sepEngine!.reason) ? why : `${sepEngine!.reason}; ${why}` };
  }
  return { speakerRecord, engines };
}

/** The record of the VAD that ran, with the provider its model ran on (none for the energy VAD). */
function vadRecord(e: StageEngine, provider: Provider | undefined): EngineRecord {
  return e.models.length && provider ? { ...e.record, provider } : { ...e.record };
}

/** `notes` when there are any. */
function notesOf(notes: string[]): { notes?: string[] } {
  return notes.length ? { notes } : {};
}

/** What reading the source_srt as SRT normalised (readSrt's notes), for the transcript's asr record. */
function sourceNotes(sourceSrt: string | undefined): { notes?: string[] } {
  const notes = sourceSrt !== undefined ? sourceSrtNotes(sourceSrt) : [];
  return notes.length ? { notes } : {};
}

/**
 * yue-CN through a Whisper model without a Cantonese token (every model but large-v3: base and
 * small among them): Whisper transcribes it as Chinese (`zh`), in Mandarin's written form, so the
 * asr record says so (Cantonese words and particles may be missed or written as Mandarin).
 */
export function whisperLanguageNotes(locale: string, engine: string, label: string, files: readonly { file: string }[]): { notes?: string[] } {
  if (locale !== 'yue-CN' || engine !== 'whisper') return {};
  const tokenizer = files.find((f) => path.basename(f.file) === 'tokenizer.json');
  let hasYue = false;
  try {
    hasYue = tokenizer ? readFileSync(tokenizer.file, 'utf8').includes('"<|yue|>"') : false;
  } catch {
    /* unreadable: said as without */
  }
  if (hasYue) return {};
  return { notes: [`${label} has no Cantonese (yue) token: yue-CN was transcribed as Chinese (zh), in Mandarin's written form; Cantonese words and particles may be missing or written as Mandarin (Whisper large-v3 has yue)`] };
}
