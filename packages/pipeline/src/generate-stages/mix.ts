/**
 * The mix stage of a generation: the speech timeline over the background (replace) or over the
 * ducked original (voice-over), loudness-normalised. A re-dub keeps the gain of the version's
 * previous generation while it is within tolerance, and a replace mix is updated from that
 * generation's mix near the changed speech when @dub/mix's mixUpdateDecision allows it (same
 * background and length, hop energies kept): only the edited lines' samples change.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { blobKeys, type JobRuntime, type QualityReport, type StageContext } from '@dub/core';
import { resample } from '@dub/media';
import { mixReplace, mixUpdateDecision, mixVoiceOver, updateMixReplace, type MixResult } from '@dub/mix';
import type { ResolvedGenerateJob } from '../generate-job.js';
import { STAGE_VERSION } from '../generate-synthesis.js';
import { readRedubState, type LoudnessNormalization, type MixState } from '../redub-state.js';
import type { GenerateStage, MixStageValue, PreviousGeneration } from './state.js';

/**
 * How far the gain that brings a re-dubbed mix exactly to the target may be from the previous
 * generation's gain for that gain to be kept (dB; the integrated loudness then stays within this
 * of the target, inside EBU R128's +-0.5 LU tolerance for file delivery).
 */
export const GAIN_TOLERANCE_DB = 0.5;

export const mixStage: GenerateStage = {
  name: 'mix',
  weight: 2,
  inputs: ['synth', 'speechKey'],
  async run(s) {
    const { rt, cache, local, media, opts, voiceOver } = s;
    const { sourceKey, sourceIdentity, duration, voiceOverDelay } = s.synth!;
    const speechKey = s.speechKey!;
    const backgroundKey = s.backgroundKey;
    const mixInputs = voiceOver ? { mode: 'voice_over', original: sourceIdentity, duckDb: opts.voiceOver.duckDb, delay: voiceOverDelay } : { mode: 'replace', background: backgroundKey };
    const target = opts.loudness.target.integrated;
    const previous = await previousNormalization(rt, s.job, voiceOver, target);
    // The background at the mix's rate and format, converted once per background and kept.
    const mixBackground = async (ctx: StageContext): Promise<string> => {
      const r = await cache.run('mix-background', { v: 1, background: backgroundKey, sampleRate: 48000, channels: 2 }, ctx, async (out) => {
        const file = path.join(out.dir, 'background.wav');
        await resample(await local(backgroundKey!), file, { ...media, sampleRate: 48000, channels: 2, format: 'float32' }, ctx);
        out.addFile('background.wav', file);
        return null;
      });
      return local(r.files['background.wav']!);
    };
    const mixed = await s.runner.run<MixStageValue>('mix', { v: STAGE_VERSION, speech: speechKey, duration, loudness: opts.loudness.given, previousGainDb: previous?.gain_db ?? null, ...mixInputs }, async (out, ctx) => {
      const file = path.join(out.dir, 'mix.wav');
      const common = { speech: await local(speechKey), output: file, durationSeconds: duration, media, tmpDir: out.dir, ...(opts.loudness.given ? { loudness: opts.loudness.given } : {}), ...(previous ? { previousGainDb: previous.gain_db, gainToleranceDb: GAIN_TOLERANCE_DB } : {}) };
      let r: MixResult | undefined;
      let update: MixStageValue['update'];
      if (!voiceOver) {
        // A re-dub: the previous generation's mix with only the frames near the changed speech computed again (same bytes as a full mix).
        const decision = mixUpdateDecision(previous, { background: backgroundKey ?? null, duration });
        if (!decision.update) update = { used: false, reason: decision.reason };
        else {
          const state = decision.state;
          const hops = new Float64Array(new Uint8Array(await rt.store.getBuffer(state.hops)).buffer);
          const u = await updateMixReplace({ ...common, background: await mixBackground(ctx), previous: { output: await local(state.mix), speech: await local(state.speech), gainDb: state.gainDb, hops } }, ctx);
          if ('fallback' in u) update = { used: false, reason: u.fallback };
          else {
            r = u;
            update = { used: true, from_generation: previous!.generation, frames: u.updated.reduce((a, x) => a + x.end - x.start, 0), spans: u.updated.map((x) => [x.start, x.end]), sampleRate: u.sampleRate };
          }
        }
      }
      r ??= voiceOver
        ? await mixVoiceOver({ ...common, original: await local(sourceKey), duckDb: opts.voiceOver.duckDb, delaySeconds: opts.voiceOver.delaySeconds }, ctx)
        : await mixReplace({ ...common, background: await mixBackground(ctx) }, ctx);
      out.addFile('mix.wav', file);
      if (r.hops) {
        const hopsFile = path.join(out.dir, 'hops.f64');
        await writeFile(hopsFile, new Uint8Array(r.hops.buffer, r.hops.byteOffset, r.hops.byteLength));
        out.addFile('hops.f64', hopsFile);
      }
      return { inputIntegrated: r.inputIntegrated, frames: r.frames, gainDb: r.gainDb, exactGainDb: r.exactGainDb, gainKept: r.gainKept, ...(update ? { update } : {}) };
    });
    const normalization: LoudnessNormalization = {
      target_lufs: target,
      premix_lufs: Number.isFinite(mixed.value.inputIntegrated) ? Math.round(mixed.value.inputIntegrated * 100) / 100 : null,
      gain_db: Math.round(mixed.value.gainDb * 100) / 100,
      exact_gain_db: Math.round(mixed.value.exactGainDb * 100) / 100,
      tolerance_db: GAIN_TOLERANCE_DB,
      kept_from_generation: mixed.value.gainKept && previous ? previous.generation : null,
    };
    return { ...(previous ? { previous } : {}), mixed, normalization };
  },
};

/**
 * The normalization of the version's latest earlier completed generation (its gain is kept by a
 * re-dub while within tolerance), with its mix state while the blobs that state names are there,
 * when it aimed at the same target with the same mix (replace or voice-over); else undefined.
 * Read from the generation's re-dub state (redub-state.ts), which revise keeps; a generation made
 * before re-dub states existed is read from its report and mix state under the result prefix.
 */
async function previousNormalization(rt: JobRuntime, version: Pick<ResolvedGenerateJob, 'assetId' | 'versionId' | 'generation'>, voiceOver: boolean, targetLufs: number): Promise<PreviousGeneration | undefined> {
  const usable = async (st: MixState | undefined, gainDb: number): Promise<MixState | undefined> =>
    // usable only while its blobs are there and it applied the gain the normalization says
    st && st.gainDb === gainDb && (await rt.store.has(st.mix)) && (await rt.store.has(st.speech)) && (!st.hops || (await rt.store.has(st.hops))) ? st : undefined;
  for (let g = version.generation - 1; g >= Math.max(1, version.generation - 20); g--) {
    const state = await readRedubState(rt.store, version.assetId, version.versionId, g);
    if (state) {
      const n = state.normalization;
      if (!(n.target_lufs === targetLufs && state.voice_over === voiceOver)) return undefined;
      const mixState = await usable(state.mix, n.gain_db);
      return { ...n, generation: g, ...(mixState ? { mixState } : {}) };
    }
    const key = blobKeys.qualityReport(version.versionId, g);
    if (!(await rt.store.has(key))) continue;
    try {
      const report = JSON.parse((await rt.store.getBuffer(key)).toString('utf8')) as QualityReport;
      const n = report.loudness?.normalization;
      if (!(n && n.target_lufs === targetLufs && report.voice_over === voiceOver)) return undefined;
      const stateKey = blobKeys.mixState(version.versionId, g);
      const mixState = (await rt.store.has(stateKey)) ? await usable(JSON.parse((await rt.store.getBuffer(stateKey)).toString('utf8')) as MixState, n.gain_db) : undefined;
      return { ...n, generation: g, ...(mixState ? { mixState } : {}) };
    } catch {
      return undefined;
    }
  }
  return undefined;
}
