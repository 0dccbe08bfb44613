/**
 * separation-plan: the engines of voice activity and separation (DUB_VAD_ENGINE,
 * DUB_SEPARATION_ENGINE: an explicit one that cannot run fails here, naming what to fetch), then,
 * without given tracks, whether there is a background to separate and where the model runs: a VAD
 * of the mix, the background measured outside its speech (@dub/separation planSeparation), and
 * the plan applied with the engine (planFor).
 */
import type { SeparationPlan } from '@dub/separation';
import { engineHost, resolveEngine, type StageEngine } from '../engine-choice.js';
import type { SpeechRegions } from '../stages.js';
import { hasGiven } from './given-tracks.js';
import { prepareStage } from './state.js';
import { vadIdentity } from './vad.js';

export const separationPlan = prepareStage({
  name: 'separation-plan',
  weight: 1,
  inputs: ['audio', 'givenSpeech', 'givenBackground'],
  async run(state, { rt, runner, stages, files, env, options }) {
    const given = hasGiven(state);
    const vadEngine = await resolveEngine('vad', options.engines.vad, undefined, engineHost(rt.config.modelsDir) as never);
    const separationEngine = given ? null : await resolveEngine('separation', options.engines.separation, undefined, { ...engineHost(rt.config.modelsDir), device: rt.config.device });
    const planned = given
      ? null
      : // v2: the plan carries the speech regions (plan.speech) outside which the background is the mix; v3: with too few gaps the pauses between words may rule a background out; v4: the pauses measured in ~10 ms frames
        await runner.run<{ vad: SpeechRegions; plan: SeparationPlan }>('separation-plan', { v: 4, mix: state.audio.key, vad: vadIdentity(vadEngine) }, async (_out, ctx) => {
          const r = await stages.planSeparation(await files.path(state.audio.files['mix.wav']!), env, ctx, vadEngine.id);
          ctx.logger.info({ mode: r.plan.mode, reason: r.plan.reason, measurement: r.plan.measurement }, 'separation plan');
          return r;
        });
    // The engine `none` keeps a measured background in the speech track; an explicit model runs whatever the check found: the plan applied says so.
    const plan = planned && separationEngine ? planFor(planned.value.plan, separationEngine) : (planned?.value.plan ?? null);
    return { vadEngine, separationEngine, planned, plan };
  },
});

/**
 * The plan applied with the separation engine `engine`:
 * - `none`: a source with a background to separate keeps it in the speech track (mode none, the
 *   mix as speech; the background track is still the mix outside speech), and the reason says so;
 * - an explicit model (DUB_SEPARATION_ENGINE, --separation-engine) runs: where the check alone
 *   would load no model (no background to separate, or no speech) it runs everywhere, and the
 *   reason names both; the check never replaces an explicit choice;
 * - otherwise the plan as measured.
 */
export function planFor(plan: SeparationPlan, engine: Pick<StageEngine, 'id' | 'selected' | 'reason'>): SeparationPlan {
  if (engine.id === 'none') {
    if (plan.mode === 'none') return plan;
    return { ...plan, mode: 'none', background: false, spans: [], modelSeconds: 0, reason: `${engine.reason}: not separated, the source's audio stays in the speech track and outside speech in the background (the plan: ${plan.reason})` };
  }
  if (engine.selected === 'explicit' && plan.mode === 'none') {
    const duration = plan.measurement.duration;
    return { ...plan, mode: 'full', spans: duration > 0 ? [{ start: 0, end: duration }] : [], modelSeconds: duration, reason: `${engine.reason}: the model runs everywhere as chosen (the check alone would run none: ${plan.reason})` };
  }
  return plan;
}
