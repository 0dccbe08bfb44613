/**
 * espeak-ng: offline formant synthesis for every target locale of the contract. Text goes in on
 * stdin (never a shell, never an argument), the WAV is written to a private temporary file (its
 * header sizes are exact there, unlike the streaming header of --stdout) and read back with
 * @dub/media's reader.
 */
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { getLocale, ValidationError, throwIfAborted, type StageContext } from '@dub/core';
import { readWav, runProcess, type PlanarAudio } from '@dub/media';
import { applyTimbre } from '../matching/timbre.js';
import type { SynthesisRequest, TtsCapabilities, TtsEngine } from '../types.js';

export interface EspeakEngineOptions {
  /** espeak-ng binary (default "espeak-ng" on PATH). */
  espeakPath?: string;
  /** Where temporary WAV files go (default the OS temp dir). */
  tmpDir?: string;
  /** Per-call time limit in milliseconds (default 60 s). */
  timeoutMs?: number;
}

interface ResolvedEspeakOptions {
  espeakPath: string;
  tmpDir: string;
  timeoutMs: number;
}

export function resolveEspeakOptions(opts: EspeakEngineOptions = {}): ResolvedEspeakOptions {
  return { espeakPath: opts.espeakPath ?? 'espeak-ng', tmpDir: opts.tmpDir ?? os.tmpdir(), timeoutMs: opts.timeoutMs ?? 60_000 };
}

export const ESPEAK_SAMPLE_RATE = 22050;
const MIN_WPM = 80;
const MAX_WPM = 450;

/** The espeak-ng voice name (language + optional variant) for a contract locale. */
export function espeakVoiceName(locale: string, variant: string): string {
  const info = getLocale(locale);
  if (!info) throw new ValidationError(`unknown locale "${locale}"`, { field: 'locale' });
  if (variant !== '' && !/^[A-Za-z0-9_-]+$/.test(variant)) throw new ValidationError(`invalid espeak-ng variant "${variant}"`, { field: 'variant' });
  return variant ? `${info.espeakVoice}+${variant}` : info.espeakVoice;
}

/** The espeak-ng argument list for one request (output file last but one, then --stdin). */
export function espeakArgs(request: SynthesisRequest, wavFile: string): string[] {
  const v = request.voice;
  const wpm = Math.round(Math.min(MAX_WPM, Math.max(MIN_WPM, v.wordsPerMinute * request.speed)));
  const pitch = Math.round(Math.min(99, Math.max(0, v.pitch)));
  const amp = Math.round(Math.min(200, Math.max(0, v.amplitude)));
  return ['-v', espeakVoiceName(request.locale, v.variant), '-s', String(wpm), '-p', String(pitch), '-a', String(amp), '-z', '-w', wavFile, '--stdin'];
}

export class EspeakEngine implements TtsEngine {
  readonly id = 'espeak-ng';
  readonly label = 'espeak-ng';
  readonly capabilities: TtsCapabilities = { rateControl: true, pitchControl: true, sampleRate: ESPEAK_SAMPLE_RATE };
  private readonly opts: ResolvedEspeakOptions;
  private voices: Promise<Set<string>> | undefined;

  constructor(opts: EspeakEngineOptions = {}) {
    this.opts = resolveEspeakOptions(opts);
  }

  /** Installed espeak-ng voice (language) names, read once per engine. */
  private installedVoices(ctx?: StageContext): Promise<Set<string>> {
    this.voices ??= runProcess(this.opts.espeakPath, ['--voices'], { timeoutMs: this.opts.timeoutMs, ...(ctx?.signal ? { signal: ctx.signal } : {}) }).then(
      (r) => {
        const names = new Set<string>();
        for (const line of r.stdout.toString('utf8').split('\n').slice(1)) {
          const cols = line.trim().split(/\s+/);
          // Pty Language Age/Gender VoiceName File Other: the Language column is what -v accepts.
          if (cols.length >= 4 && cols[1]) names.add(cols[1].toLowerCase());
        }
        return names;
      },
      (e: unknown) => {
        this.voices = undefined;
        throw e;
      },
    );
    return this.voices;
  }

  async supportsLocale(locale: string): Promise<boolean> {
    const info = getLocale(locale);
    if (!info?.target && !info?.source) return false;
    return (await this.installedVoices()).has(info.espeakVoice.toLowerCase());
  }

  async synthesize(request: SynthesisRequest, ctx: StageContext): Promise<PlanarAudio> {
    throwIfAborted(ctx.signal);
    const text = request.text.replace(/\s+/g, ' ').trim();
    if (text === '') return { sampleRate: this.capabilities.sampleRate, channels: [new Float32Array(0)] };
    const dir = await fsp.mkdtemp(path.join(this.opts.tmpDir, 'dub-espeak-'));
    try {
      const wav = path.join(dir, 'speech.wav');
      const args = espeakArgs(request, wav);
      ctx.logger.debug({ args }, 'espeak-ng');
      await runProcess(this.opts.espeakPath, args, {
        input: Buffer.from(text, 'utf8'),
        stdout: 'ignore',
        timeoutMs: this.opts.timeoutMs,
        ...(ctx.signal ? { signal: ctx.signal } : {}),
      });
      const audio = await readWav(wav);
      const mono = audio.channels[0] ?? new Float32Array(0);
      return { sampleRate: audio.sampleRate, channels: [request.voice.timbre ? applyTimbre(mono, audio.sampleRate, request.voice.timbre) : mono] };
    } finally {
      await fsp.rm(dir, { recursive: true, force: true });
    }
  }

  async dispose(): Promise<void> {
    this.voices = undefined;
  }
}

export function createEspeakEngine(opts: EspeakEngineOptions = {}): EspeakEngine {
  return new EspeakEngine(opts);
}
