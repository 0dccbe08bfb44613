/**
 * speakers: who speaks each segment (@dub/asr diarize: the job's speakers_count, else estimated;
 * segments split at speaker changes) with the speaker engine, and a reference clip (6-20 s) per
 * speaker stored with the stage's artifact.
 */
import path from 'node:path';
import { speakerEngineOf } from '../engine-choice.js';
import type { SpeakerTurns } from '../stages.js';
import { prepareStage, providerOf, type Provider } from './state.js';

export const speakers = prepareStage({
  name: 'speakers',
  weight: 3,
  inputs: ['speechKey', 'vad', 'recognition'],
  async run({ speechKey, vad, recognition }, { job, rt, runner, stages, files, env, options }) {
    const speakerEngine = await speakerEngineOf(options.engines.speaker, rt.config.modelsDir);
    const turns = await runner.run<SpeakerTurns & { provider?: Provider }>(
      'speakers',
      // v2: the output records how the count was reached and the clusters folded or merged
      // v3: the count by length-normalized BIC, and lines cut to at most 7 s at pauses (issue #26)
      // v4: each line's span fitted to the speech inside it (a source SRT's cues keep their times)
      { v: 4, speech: speechKey, transcription: recognition.key, speakers_count: job.speakers_count ?? null, engine: speakerEngine.id, model: speakerEngine.models[0]?.sha256 ?? null, window: speakerEngine.window ?? null },
      async (out, ctx) => {
        const refDir = path.join(out.dir, 'references');
        const t = await stages.diarize(
          await files.path(speechKey),
          {
            locale: job.locale,
            segments: recognition.value.segments,
            regions: vad.value,
            ...(job.speakers_count !== undefined ? { speakersCount: job.speakers_count } : {}),
            outDir: refDir,
            ...(recognition.value.engine === 'source_srt' ? { authored: true } : {}),
            embedding: speakerEngine.embedding,
            ...(speakerEngine.models[0] ? { embeddingModel: speakerEngine.models[0].file } : {}),
          },
          env,
          ctx,
        );
        for (const sp of t.speakers) if (sp.reference) out.addFile(`reference-${sp.id}.wav`, sp.reference.file);
        const provider = speakerEngine.models[0] ? providerOf(rt, speakerEngine.models[0].file) : undefined;
        return { ...t, speakers: t.speakers.map((sp) => (sp.reference ? { ...sp, reference: { ...sp.reference, file: `reference-${sp.id}.wav` } } : sp)), ...(provider ? { provider } : {}) };
      },
    );
    const referenceKeys: Record<string, string> = {};
    for (const sp of turns.value.speakers) if (sp.reference) referenceKeys[sp.id] = turns.files[sp.reference.file]!;
    return { speakerEngine, speakers: turns, referenceKeys };
  },
});
