/**
 * The checks every TtsEngine must pass. Framework-free: each check throws on failure, so a test
 * file runs them as `for (const c of TTS_CONFORMANCE_CHECKS) it(c.name, () => c.run(engine, opts))`.
 */
import { abortProblem, engineContractProblems, resolveContext } from '@dub/core';
import type { PlanarAudio } from '@dub/media';
import { DEFAULT_VOICE, type SynthesisRequest, type TtsEngine } from '../types.js';
import { medianPitch } from '../analysis/pitch.js';

export interface ConformanceOptions {
  locale: string;
  text: string;
}

export interface ConformanceCheck {
  name: string;
  run(engine: TtsEngine, opts: ConformanceOptions): Promise<void>;
}

function fail(why: string): never {
  throw new Error(`TTS conformance: ${why}`);
}

function request(opts: ConformanceOptions, over: Partial<SynthesisRequest> = {}): SynthesisRequest {
  return { text: opts.text, locale: opts.locale, voice: { ...DEFAULT_VOICE }, speed: 1, ...over };
}

function check(audio: PlanarAudio, engine: TtsEngine): Float32Array {
  if (audio.channels.length !== 1) fail(`expected mono, got ${audio.channels.length} channels`);
  if (audio.sampleRate !== engine.capabilities.sampleRate) fail(`sample rate ${audio.sampleRate} != declared ${engine.capabilities.sampleRate}`);
  return audio.channels[0]!;
}

const ctx = resolveContext();

export const TTS_CONFORMANCE_CHECKS: readonly ConformanceCheck[] = [
  {
    name: 'is an Engine: id, label, dispose()',
    async run(engine) {
      const problems = engineContractProblems(engine);
      if (problems.length) fail(problems.join('; '));
    },
  },
  {
    name: 'speaks text as finite mono audio at the declared rate',
    async run(engine, opts) {
      const x = check(await engine.synthesize(request(opts), ctx), engine);
      if (x.length < engine.capabilities.sampleRate * 0.2) fail(`only ${x.length} samples for "${opts.text}"`);
      let peak = 0;
      for (const v of x) {
        if (!Number.isFinite(v)) fail('non-finite sample');
        peak = Math.max(peak, Math.abs(v));
      }
      if (peak < 0.01 || peak > 1.0001) fail(`peak ${peak} outside (0.01, 1]`);
    },
  },
  {
    name: 'gives empty audio for empty text',
    async run(engine, opts) {
      const x = check(await engine.synthesize(request(opts, { text: '   ' }), ctx), engine);
      if (x.length !== 0) fail(`expected no samples, got ${x.length}`);
    },
  },
  {
    name: 'speaks faster at a higher speed (rate control)',
    async run(engine, opts) {
      if (!engine.capabilities.rateControl) return;
      const slow = check(await engine.synthesize(request(opts, { speed: 1 }), ctx), engine);
      const fast = check(await engine.synthesize(request(opts, { speed: 1.5 }), ctx), engine);
      if (!(fast.length < slow.length * 0.85)) fail(`speed 1.5 gave ${fast.length} samples vs ${slow.length} at 1`);
    },
  },
  {
    name: 'raises F0 with the pitch setting (pitch control)',
    async run(engine, opts) {
      if (!engine.capabilities.pitchControl) return;
      const sr = engine.capabilities.sampleRate;
      const lo = medianPitch(check(await engine.synthesize(request(opts, { voice: { ...DEFAULT_VOICE, pitch: 20 } }), ctx), engine), sr);
      const hi = medianPitch(check(await engine.synthesize(request(opts, { voice: { ...DEFAULT_VOICE, pitch: 80 } }), ctx), engine), sr);
      if (!(hi > lo * 1.2)) fail(`F0 at pitch 80 (${hi.toFixed(1)} Hz) not above pitch 20 (${lo.toFixed(1)} Hz)`);
    },
  },
  {
    name: 'supports its locale and rejects an unknown one',
    async run(engine, opts) {
      if (!(await engine.supportsLocale(opts.locale))) fail(`does not support ${opts.locale}`);
      if (await engine.supportsLocale('xx-XX')) fail('claims to support xx-XX');
    },
  },
  {
    name: 'stops with AbortedError when the signal has fired',
    async run(engine, opts) {
      const ac = new AbortController();
      ac.abort('test');
      const problem = await abortProblem(() => engine.synthesize(request(opts), { ...ctx, signal: ac.signal }), 'synthesis');
      if (problem) fail(problem);
    },
  },
  {
    name: 'disposes idempotently',
    async run(engine) {
      await engine.dispose();
      await engine.dispose();
    },
  },
];
