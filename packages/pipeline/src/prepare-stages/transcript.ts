/**
 * transcript: once the trimmed video and the thumbnail are done (their failure is the job's), the
 * transcript (core TranscriptSchema) with its separation and engine records, stored as the
 * asset's transcript blob (not written again when unchanged: `stage_done` cached). Text the
 * transcription removed (a repetition loop's repeats) is on its segment (`removed`) and a note of
 * the asr record.
 */
import { blobKeys, validate, TranscriptSchema, type Transcript } from '@dub/core';
import { buildTranscript, noSpeechNotes, noSpeechWindows, removedTextNotes, separationRecord } from '../transcript.js';
import { engineRecords } from './records.js';
import { prepareStage } from './state.js';

export const transcript = prepareStage({
  name: 'transcript',
  weight: 0.1,
  inputs: [
    'video',
    'duration',
    'givenSpeech',
    'givenBackground',
    'separationEngine',
    'plan',
    'separated',
    'separationModel',
    'separationGraph',
    'speechKey',
    'vadEngine',
    'asr',
    'recognition',
    'speakerEngine',
    'speakers',
    'referenceKeys',
  ],
  async run(state, { job, rt, runner }) {
    const { duration, plan, separated, recognition, speakers, referenceKeys, speechKey } = state;
    // The trimmed video and the thumbnail (their failure is the job's).
    const source = await state.video;
    const t0 = performance.now();
    // What the background holds: the source's audio outside speech, the model's background (or silence) in it.
    const kept = plan ? (await import('@dub/separation')).keptOutsideSpeech(plan.speech ?? [], duration) : undefined;
    const separation = separationRecord(separated.value.engine, plan ?? undefined, kept);
    const { speakerRecord, engines } = await engineRecords(state, kept);
    const built = buildTranscript(job.locale, duration, recognition.value.engine, speakers.value, referenceKeys, { speech: speechKey, background: separated.files['background.wav']! }, separation, recognition.value.removedRepeats);
    // text removed from segments (a repetition loop's repeats) is said in the asr record too, never silently
    const removed = removedTextNotes(built.segments);
    // and windows Whisper judged silent: left out, or kept when every window was
    const silent = noSpeechWindows(recognition.value.skippedWindows);
    const notes = [...removed, ...noSpeechNotes(silent)];
    if (notes.length && engines.asr) engines.asr = { ...engines.asr, notes: [...(engines.asr.notes ?? []), ...notes] };
    const doc = validate<Transcript>(
      TranscriptSchema,
      {
        ...built,
        ...(silent ? { no_speech_windows: silent } : {}),
        speaker_engine: speakerRecord,
        engines,
      },
      'transcript',
    );
    const transcriptKey = blobKeys.transcript(job.asset_id);
    const json = JSON.stringify(doc);
    const unchanged = (await rt.store.has(transcriptKey)) && (await rt.store.getBuffer(transcriptKey)).toString('utf8') === json;
    if (!unchanged) await rt.store.put(transcriptKey, Buffer.from(json));
    await runner.done('transcript', unchanged, (performance.now() - t0) / 1000);
    return { transcript: doc, transcriptKey, source };
  },
});
