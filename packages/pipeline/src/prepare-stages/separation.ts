/**
 * separation: the speech and background tracks (`speech.wav`, `background.wav`). The model runs
 * where the plan says (its model file's identity and graph form are in the key: a replaced model
 * separates again), or the given clean tracks are trimmed to the window (the missing one is
 * mix - given); with the plan none and no background the speech is the mix (no model, no GPU
 * slot). Whatever the plan, the background track is the source's audio outside speech.
 */
import path from 'node:path';
import { separationGraph } from '../separation-graph.js';
import { MIX_FORMAT } from './audio.js';
import { hasGiven } from './given-tracks.js';
import { prepareStage, providerOf, type Provider } from './state.js';

export const separation = prepareStage({
  name: 'separation',
  weight: 12,
  inputs: ['audio', 'range', 'givenSpeech', 'givenBackground', 'separationEngine', 'planned', 'plan'],
  async run(state, { rt, runner, stages, files, env }) {
    const { audio, range, planned, plan } = state;
    const sepEngine = state.separationEngine;
    const given = { speech: state.givenSpeech, background: state.givenBackground };
    const withGiven = hasGiven(state);
    // The model's identity is part of the key: a replaced HTDemucs separates again.
    const separationModel = sepEngine && plan?.mode !== 'none' ? sepEngine.models[0] : undefined;
    // Whole graph or its consecutive parts (same weights, outputs equal within float rounding): in the key and the record.
    const sepGraph = separationModel ? await separationGraph(separationModel.file, rt.config, sepEngine!.id) : undefined;
    const separated = await runner.run<{ engine: string; provider?: Provider }>(
      'separation',
      {
        mix: audio.key,
        given: withGiven ? { speech: given.speech?.identity ?? null, background: given.background?.identity ?? null, range } : null,
        plan: planned?.key ?? null,
        // the mode applied (an explicit model runs where the check alone would run none), and v2: the mix kept outside speech
        mode: plan?.mode ?? null,
        keep: plan ? 2 : null,
        engine: sepEngine?.id ?? null,
        ...(separationModel ? { model: separationModel.sha256 } : {}),
        ...(sepGraph ? { graph: sepGraph.split ? `split-${sepGraph.split.parts.length}` : 'whole' } : {}),
      },
      async (out, ctx) => {
        const mix = await files.path(audio.files['mix.wav']!);
        const speech = path.join(out.dir, 'speech.wav');
        const background = path.join(out.dir, 'background.wav');
        let tracks: { speech?: string; background?: string } | undefined;
        if (withGiven) {
          tracks = {};
          for (const kind of ['speech', 'background'] as const) {
            const g = given[kind];
            if (!g) continue;
            const file = path.join(out.dir, `given-${kind}.wav`);
            await stages.extractAudio(await files.path(g.key), file, range, MIX_FORMAT, env, ctx);
            tracks[kind] = file;
          }
        }
        const run = () => stages.separate(mix, { speech, background }, tracks, env, ctx, plan ?? undefined, sepEngine?.id);
        // No model, no GPU slot.
        const engine = rt.withLimit && plan?.mode !== 'none' ? await rt.withLimit('gpu', run) : await run();
        out.addFile('speech.wav', speech);
        out.addFile('background.wav', background);
        const provider = sepGraph ? providerOf(rt, sepGraph.sessionFile) : undefined;
        return { engine, ...(provider ? { provider } : {}) };
      },
    );
    return { separated, separationModel: separationModel ?? null, separationGraph: sepGraph ?? null, speechKey: separated.files['speech.wav']! };
  },
});
