/**
 * pocketsphinx (Debian `pocketsphinx` + `pocketsphinx-en-us`): English only, weak accuracy, runs
 * anywhere. Mode `regions` (default) decodes each VAD region as one utterance in a single
 * `pocketsphinx_batch` process (control file of frame ranges, CTM output with word times); mode
 * `file` runs `pocketsphinx_continuous -time yes` over the whole file and keeps its own
 * segmentation.
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
import type { AsrEngine, AsrEngineOutput, AsrEngineProvider, AsrRequest, AsrSegment, AsrWord } from './types.js';

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
  tmpDir: string;
  timeoutMs: number;
}

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
  constructor(private readonly o: ResolvedPocketsphinxOptions, private readonly bin: string) {}

  async transcribe(audio: SpeechAudio, req: AsrRequest, ctx: StageContext): Promise<AsrEngineOutput> {
    return { segments: this.o.mode === 'regions' ? await this.byRegions(audio, req, ctx) : await this.wholeFile(audio, ctx) };
  }

  private async byRegions(audio: SpeechAudio, req: AsrRequest, ctx: StageContext): Promise<AsrSegment[]> {
    const regions = splitLongRegions(req.regions, this.o.maxUtteranceSeconds);
    if (!regions.length) return [];
    const dir = await mkdtemp(path.join(this.o.tmpDir, 'dub-pocketsphinx-'));
    try {
      await writeRaw(audio, path.join(dir, 'speech.raw'), ctx);
      const ctl = regions.map((r, i) => `speech ${Math.floor(r.start * 100)} ${Math.ceil(r.end * 100)} u${i}`).join('\n') + '\n';
      await writeFile(path.join(dir, 'utts.ctl'), ctl);
      const ctm = path.join(dir, 'out.ctm');
      let done = 0;
      await runProcess(
        this.bin,
        ['-ctl', path.join(dir, 'utts.ctl'), '-cepdir', dir, '-cepext', '.raw', '-adcin', 'yes', '-adchdr', '0', '-samprate', '16000', '-ctm', ctm, '-hyp', path.join(dir, 'out.hyp'), ...modelArgs(this.o)],
        {
          stdout: 'ignore',
          onStderrLine: (line) => {
            if (line.includes('Decoding ')) reportProgress(ctx, 'asr', ++done / regions.length);
          },
          ...(ctx.signal ? { signal: ctx.signal } : {}),
          ...(this.o.timeoutMs > 0 ? { timeoutMs: this.o.timeoutMs } : {}),
        },
      );
      const byUtt = parseCtm(await readFile(ctm, 'utf8'));
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

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

export const pocketsphinxProvider: AsrEngineProvider<ResolvedPocketsphinxOptions> = {
  id: 'pocketsphinx',
  async supports(locale, o) {
    return /^en(-|$)/.test(locale) && findExecutable(binaryFor(o)) !== undefined && [o.hmm, o.lm, o.dict].every((f) => existsSync(f));
  },
  installHint: () => 'apt-get install pocketsphinx pocketsphinx-en-us (English only)',
  async create(o: ResolvedPocketsphinxOptions, _env: EngineEnv) {
    const bin = findExecutable(binaryFor(o));
    if (!bin) throw new EngineUnavailableError(`pocketsphinx binary ${binaryFor(o)} not found on PATH; apt-get install pocketsphinx pocketsphinx-en-us`);
    for (const f of [o.hmm, o.lm, o.dict]) if (!existsSync(f)) throw new EngineUnavailableError(`pocketsphinx model file ${f} is missing; apt-get install pocketsphinx-en-us`);
    return new Pocketsphinx(o, bin);
  },
};
