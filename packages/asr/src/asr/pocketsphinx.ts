/**
 * pocketsphinx (Debian `pocketsphinx` + `pocketsphinx-en-us`): English only, weak accuracy, runs
 * anywhere. Mode `regions` (default) decodes each VAD region as one utterance with
 * `pocketsphinx_batch` (control file of frame ranges, CTM output with word times), the utterances
 * shared out over up to `processes` batch processes run at once; mode `file` runs
 * `pocketsphinx_continuous -time yes` over the whole file and keeps its own segmentation.
 *
 * The model's feat.params sets `-cmn batch` (cepstral mean of each utterance alone) and nothing
 * else carries from one utterance to the next, so an utterance gives the same words and times
 * whichever process decodes it and with whichever others.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { EngineUnavailableError, reportProgress, throwIfAborted, type StageContext } from '@dub/core';
import { runProcess } from '@dub/media';
import type { EngineEnv } from '../engine-env.js';
import type { SpeechAudio } from '../speech-audio.js';
import { findExecutable } from '../which.js';
import { splitLongRegions } from './chunking.js';
import { parseContinuousTimes, parseCtm } from './pocketsphinx-output.js';
import type { AsrEngine, AsrEngineOutput, AsrRequest, AsrSegment, AsrWord } from './types.js';

export interface PocketsphinxOptions {
  /** `regions` (default): one utterance per VAD region; `file`: pocketsphinx's own segmentation. */
  mode?: 'regions' | 'file';
  batchBinary?: string;
  continuousBinary?: string;
  /** Folder with `en-us/` (acoustic model), `en-us.lm.bin` and `cmudict-en-us.dict`. */
  modelDir?: string;
  hmm?: string;
  lm?: string;
  dict?: string;
  /** Regions longer than this are decoded in pieces (seconds, default 30). */
  maxUtteranceSeconds?: number;
  /**
   * Mode `regions`: at most this many `pocketsphinx_batch` processes at once (default: the CPU
   * cores, at most 4), each decoding a share of the utterances; fewer when there is little speech
   * (one per `MIN_SECONDS_PER_PROCESS` of it), since each one loads the model (about 0.3 s).
   */
  processes?: number;
  tmpDir?: string;
  timeoutMs?: number;
}

export interface ResolvedPocketsphinxOptions {
  mode: 'regions' | 'file';
  batchBinary: string;
  continuousBinary: string;
  hmm: string;
  lm: string;
  dict: string;
  maxUtteranceSeconds: number;
  processes: number;
  tmpDir: string;
  timeoutMs: number;
}

/** Seconds of speech that justify one more batch process (it costs a model load, about 0.3 s). */
export const MIN_SECONDS_PER_PROCESS = 10;

export const DEFAULT_POCKETSPHINX_MODEL_DIR = '/usr/share/pocketsphinx/model/en-us';

export function resolvePocketsphinxOptions(o: PocketsphinxOptions = {}): ResolvedPocketsphinxOptions {
  const dir = o.modelDir ?? DEFAULT_POCKETSPHINX_MODEL_DIR;
  return {
    mode: o.mode ?? 'regions',
    batchBinary: o.batchBinary ?? 'pocketsphinx_batch',
    continuousBinary: o.continuousBinary ?? 'pocketsphinx_continuous',
    hmm: o.hmm ?? path.join(dir, 'en-us'),
    lm: o.lm ?? path.join(dir, 'en-us.lm.bin'),
    dict: o.dict ?? path.join(dir, 'cmudict-en-us.dict'),
    maxUtteranceSeconds: o.maxUtteranceSeconds ?? 30,
    processes: Math.max(1, Math.floor(o.processes ?? Math.min(os.availableParallelism(), 4))),
    tmpDir: o.tmpDir ?? os.tmpdir(),
    timeoutMs: o.timeoutMs ?? 0,
  };
}

function binaryFor(o: ResolvedPocketsphinxOptions): string {
  return o.mode === 'regions' ? o.batchBinary : o.continuousBinary;
}

function modelArgs(o: ResolvedPocketsphinxOptions): string[] {
  return ['-hmm', o.hmm, '-lm', o.lm, '-dict', o.dict, '-logfn', '/dev/null'];
}

/** Write the audio as raw s16le (what pocketsphinx_batch reads with -adcin yes), window by window. */
async function writeRaw(audio: SpeechAudio, file: string, ctx: StageContext): Promise<void> {
  const fh = await open(file, 'w');
  try {
    for await (const { samples } of audio.windows(16000 * 30)) {
      throwIfAborted(ctx.signal);
      const buf = Buffer.alloc(samples.length * 2);
      for (let i = 0; i < samples.length; i++) buf.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(samples[i]! * 32767))), i * 2);
      await fh.write(buf);
    }
  } finally {
    await fh.close();
  }
}

function segmentOf(words: AsrWord[]): AsrSegment {
  return { start: words[0]!.start, end: words[words.length - 1]!.end, text: words.map((w) => w.text).join(' '), words };
}

class Pocketsphinx implements AsrEngine {
  readonly id = 'pocketsphinx';
  readonly label = 'pocketsphinx (en-US)';
  constructor(private readonly o: ResolvedPocketsphinxOptions, private readonly bin: string) {}

  /** Each transcription runs its own processes and removes its files: nothing is held between them. */
  async dispose(): Promise<void> {}

  async transcribe(audio: SpeechAudio, req: AsrRequest, ctx: StageContext): Promise<AsrEngineOutput> {
    return { segments: this.o.mode === 'regions' ? await this.byRegions(audio, req, ctx) : await this.wholeFile(audio, ctx) };
  }

  private async byRegions(audio: SpeechAudio, req: AsrRequest, ctx: StageContext): Promise<AsrSegment[]> {
    const regions = splitLongRegions(req.regions, this.o.maxUtteranceSeconds);
    if (!regions.length) return [];
    const dir = await mkdtemp(path.join(this.o.tmpDir, 'dub-pocketsphinx-'));
    try {
      await writeRaw(audio, path.join(dir, 'speech.raw'), ctx);
      const groups = shareUtterances(regions, Math.min(this.o.processes, Math.ceil(totalSeconds(regions) / MIN_SECONDS_PER_PROCESS)));
      let done = 0;
      const ctmText = await allOrFirstError(ctx.signal, groups, async (group, g, signal) => {
        const ctl = group.map((i) => `speech ${Math.floor(regions[i]!.start * 100)} ${Math.ceil(regions[i]!.end * 100)} u${i}`).join('\n') + '\n';
        await writeFile(path.join(dir, `utts-${g}.ctl`), ctl);
        const ctm = path.join(dir, `out-${g}.ctm`);
        await runProcess(
          this.bin,
          ['-ctl', path.join(dir, `utts-${g}.ctl`), '-cepdir', dir, '-cepext', '.raw', '-adcin', 'yes', '-adchdr', '0', '-samprate', '16000', '-ctm', ctm, '-hyp', path.join(dir, `out-${g}.hyp`), ...modelArgs(this.o)],
          {
            stdout: 'ignore',
            onStderrLine: (line) => {
              if (line.includes('Decoding ')) reportProgress(ctx, 'asr', ++done / regions.length);
            },
            signal,
            ...(this.o.timeoutMs > 0 ? { timeoutMs: this.o.timeoutMs } : {}),
          },
        );
        return readFile(ctm, 'utf8');
      });
      const byUtt = parseCtm(ctmText.join(''));
      const segments: AsrSegment[] = [];
      regions.forEach((r, i) => {
        const words = (byUtt.get(`u${i}`) ?? []).map((w) => ({ ...w, start: round3(Math.min(r.end, r.start + w.start)), end: round3(Math.min(r.end, r.start + w.end)) }));
        if (words.length) segments.push(segmentOf(words));
      });
      return segments;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  private async wholeFile(audio: SpeechAudio, ctx: StageContext): Promise<AsrSegment[]> {
    const file = await audio.wavFile();
    const res = await runProcess(this.bin, ['-infile', file, '-time', 'yes', ...modelArgs(this.o)], {
      ...(ctx.signal ? { signal: ctx.signal } : {}),
      ...(this.o.timeoutMs > 0 ? { timeoutMs: this.o.timeoutMs } : {}),
    });
    reportProgress(ctx, 'asr', 1);
    return parseContinuousTimes(res.stdout.toString('utf8'))
      .map((ws) => ws.map((w) => ({ ...w, start: Math.min(w.start, audio.duration), end: Math.min(w.end, audio.duration) })))
      .map(segmentOf);
  }
}

/**
 * `run` on every item at once, each with a signal that aborts when `outer` does or when another
 * one fails; resolves when all are settled (no child left running), with their values in order,
 * or rejects with the first failure (the outer abort's error when that came first).
 */
async function allOrFirstError<T, R>(outer: AbortSignal | undefined, items: readonly T[], run: (item: T, index: number, signal: AbortSignal) => Promise<R>): Promise<R[]> {
  const stop = new AbortController();
  const onAbort = () => stop.abort(outer?.reason);
  if (outer?.aborted) onAbort();
  outer?.addEventListener('abort', onAbort, { once: true });
  let first: { error: unknown } | undefined;
  try {
    const settled = await Promise.allSettled(
      items.map(async (item, i) => {
        try {
          return await run(item, i, stop.signal);
        } catch (e) {
          first ??= { error: e };
          stop.abort(e);
          throw e;
        }
      }),
    );
    if (first) throw first.error;
    return settled.map((r) => (r as PromiseFulfilledResult<R>).value);
  } finally {
    outer?.removeEventListener('abort', onAbort);
  }
}

function totalSeconds(regions: readonly { start: number; end: number }[]): number {
  return regions.reduce((a, r) => a + (r.end - r.start), 0);
}

/**
 * The utterances (indices into `regions`) of each of at most `n` processes: longest first to the
 * least loaded one, so their seconds of speech are close; each list in time order.
 */
export function shareUtterances(regions: readonly { start: number; end: number }[], n: number): number[][] {
  const groups: number[][] = Array.from({ length: Math.max(1, Math.min(n, regions.length)) }, () => []);
  const load = groups.map(() => 0);
  const order = regions.map((_, i) => i).sort((a, b) => regions[b]!.end - regions[b]!.start - (regions[a]!.end - regions[a]!.start) || a - b);
  for (const i of order) {
    let g = 0;
    for (let k = 1; k < groups.length; k++) if (load[k]! < load[g]!) g = k;
    groups[g]!.push(i);
    load[g]! += regions[i]!.end - regions[i]!.start;
  }
  for (const group of groups) group.sort((a, b) => a - b);
  return groups.filter((group) => group.length > 0);
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

/** Whether pocketsphinx with these options can run here: its binary is on the PATH and its model files exist (English only: the registry entry checks the locale). */
export function isPocketsphinxInstalled(o: ResolvedPocketsphinxOptions): boolean {
  return findExecutable(binaryFor(o)) !== undefined && [o.hmm, o.lm, o.dict].every((f) => existsSync(f));
}

/** A pocketsphinx engine with these options (ASR_ENGINES' `pocketsphinx` entry creates it). */
export async function createPocketsphinx(o: ResolvedPocketsphinxOptions, _env?: EngineEnv): Promise<AsrEngine> {
  const bin = findExecutable(binaryFor(o));
  if (!bin) throw new EngineUnavailableError(`pocketsphinx binary ${binaryFor(o)} not found on PATH; apt-get install pocketsphinx pocketsphinx-en-us`);
  for (const f of [o.hmm, o.lm, o.dict]) if (!existsSync(f)) throw new EngineUnavailableError(`pocketsphinx model file ${f} is missing; apt-get install pocketsphinx-en-us`);
  return new Pocketsphinx(o, bin);
}
