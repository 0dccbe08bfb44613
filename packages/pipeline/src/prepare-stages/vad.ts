/**
 * vad: the speech regions of the speech track (@dub/asr detectSpeech with the VAD engine); when
 * the speech track is the mix itself (no background), the mix's VAD of the plan is its VAD.
 */
import type { StageEngine } from '../engine-choice.js';
import type { SpeechRegions } from '../stages.js';
import { prepareStage } from './state.js';

/** The VAD engine and its model's sha256: in the keys of the plan and of this stage (another VAD runs them again). */
export function vadIdentity(engine: StageEngine): { engine: string; model: string | null } {
  return { engine: engine.id, model: engine.models[0]?.sha256 ?? null };
}

export const vad = prepareStage({
  name: 'vad',
  weight: 1,
  inputs: ['speechKey', 'vadEngine', 'planned', 'plan'],
  async run({ speechKey, vadEngine, planned, plan }, { runner, stages, files, env }) {
    const mixIsSpeech = plan?.mode === 'none' && !plan.background;
    const regions = await runner.run<SpeechRegions>('vad', { speech: speechKey, ...vadIdentity(vadEngine), ...(mixIsSpeech ? { same_as: planned!.key } : {}) }, async (_out, ctx) =>
      mixIsSpeech ? planned!.value.vad : stages.detectSpeech(await files.path(speechKey), env, ctx, vadEngine.id),
    );
    return { vad: regions };
  },
});
