/**
 * transcription: the segments and words of the speech regions (@dub/asr transcribe with the
 * engine chosen for the locale), or the asset's source_srt. The engine and its model files
 * (sha256) are part of the key: installing Whisper transcribes again. No words: empty_transcript.
 * A repetition loop that survived every temperature keeps its first copy; the repeats removed are
 * listed (`removedRepeats`) and end up on their transcript segments (`removed`).
 */
import { AssetError } from '@dub/core';
import { asrEngineIdentity, type StageEngine } from '../engine-choice.js';
import type { Recognition } from '../stages.js';
import { prepareStage, providerOf, runAsOf, type Provider } from './state.js';

/** The "engine" of a transcript read from the asset's source_srt. */
const SOURCE_SRT: StageEngine = {
  id: 'source_srt',
  selected: 'explicit',
  reason: 'the asset has a source_srt',
  models: [],
  record: { id: 'source_srt', label: 'source subtitles', selected: 'explicit', reason: 'the asset has a source_srt' },
};

export const transcription = prepareStage({
  name: 'transcription',
  weight: 6,
  inputs: ['speechKey', 'vad'],
  async run({ speechKey, vad }, { job, rt, runner, stages, files, env, options }) {
    const asr = job.source_srt !== undefined ? SOURCE_SRT : await asrEngineIdentity(job.locale, rt.config.modelsDir, options.engines.asr);
    const recognition = await runner.run<Recognition & { provider?: Provider; runAs?: string[] }>(
      'transcription',
      // v2: a repetition loop Whisper decoded at every temperature is cut to its first copy (removedRepeats)
      // v3: windows Whisper judged silent are listed, and kept when every window was (noSpeechFallback)
      { v: 3, speech: speechKey, vad: vad.key, locale: job.locale, source_srt: job.source_srt ?? null, engine: asr.id, model: asr.models.length ? asr.models.map((m) => [m.model, m.sha256]) : null },
      async (_out, ctx) => {
        const request = { locale: job.locale, regions: vad.value, ...(job.source_srt !== undefined ? { sourceSrt: job.source_srt } : asr.id !== 'none' ? { engine: asr.id } : {}) };
        const run = async () => stages.transcribe(await files.path(speechKey), request, env, ctx);
        const r = rt.withLimit ? await rt.withLimit('gpu', run) : await run();
        if (!r.segments.some((s) => s.text.trim() !== '')) throw new AssetError('empty_transcript', 'no spoken content was found in the video');
        const provider = asr.models[0] ? providerOf(rt, asr.models[0].file) : undefined;
        const runAs = runAsOf(rt, asr.models);
        return { ...r, ...(provider ? { provider } : {}), ...(runAs.length ? { runAs } : {}) };
      },
    );
    return { asr, recognition };
  },
});
