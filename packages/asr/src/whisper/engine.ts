/**
 * Whisper ASR engine over ONNX: log-mel features in TypeScript (as many mel bins as the model's
 * config says), encoder + merged decoder with KV cache from the session cache, decoding with
 * openai/whisper's logit filters, temperature fallback and no-speech check (decode.ts), long audio
 * cut into chunks of at most 30 s on VAD region boundaries, optional language detection on the
 * first chunk. Windows judged silent are skipped and listed in the output's `skippedWindows`; a
 * repetition loop that survived every temperature is marked on its words (`loop`), or, with the
 * request's `removeLoopRepeats`, cut to its first copy and listed in `removedRepeats`.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { getModelEntry, ModelError, reportProgress, resolveModelFile, throwIfAborted, type StageContext } from '@dub/core';
import type { OnnxModel } from '@dub/onnx';
import { groupRegions, packRegions, unpackTime, unpackWords, type PackedChunk } from '../asr/chunking.js';
import type { AsrEngine, AsrEngineOutput, AsrRequest, AsrSegment, DetectedLanguage, RemovedRepeats, SkippedWindow } from '../asr/types.js';
import { WhisperFeatureExtractor } from '../dsp/whisper-mel.js';
import type { EngineEnv } from '../engine-env.js';
import { SPEECH_SAMPLE_RATE, type SpeechAudio } from '../speech-audio.js';
import { decodeWithFallback, detectLanguageFromEncoding, suppressTokenIds } from './decode.js';
import { whisperLanguageOf } from './languages.js';
import { otherScriptTokens } from './script-tokens.js';
import { decoderLayout, encoderMels, WHISPER_ENCODER_OUTPUT, WhisperSessions } from './model.js';
import { maxNewTokensFor, whisperFileNames, whisperLabel, whisperModelOf, WHISPER_PREPROCESSOR_CONFIG, type ResolvedWhisperOptions } from './options.js';
import { alignmentHeadsOf, shortenLongWords } from './alignment.js';
import { dropLoopRepeats, markRepetitionLoops } from './repetition.js';
import { tokensToSegments } from './segments.js';
import { round3 } from '../asr/text-words.js';
import { WhisperTokenizer } from './tokenizer.js';

export interface WhisperFiles {
  encoder: string;
  decoder: string;
  tokenizer: string;
}

/** Paths of the model's files: explicit options first, then the model resolver (the model's own file names: float or q8). */
export function resolveWhisperFiles(o: ResolvedWhisperOptions, env: Pick<EngineEnv, 'models'>): WhisperFiles {
  const model = whisperModelOf(o, env.models);
  const names = whisperFileNames(model, env.models);
  return {
    encoder: o.encoderFile ?? resolveModelFile(model, names.encoder, env.models),
    decoder: o.decoderFile ?? resolveModelFile(model, names.decoder, env.models),
    tokenizer: o.tokenizerFile ?? resolveModelFile(model, names.tokenizer, env.models),
  };
}

/** `feature_size` of a preprocessor_config.json, or undefined when the file is absent. */
export function melsFromPreprocessorConfig(file: string): number | undefined {
  if (!existsSync(file)) return undefined;
  let json: { feature_size?: unknown };
  try {
    json = JSON.parse(readFileSync(file, 'utf8')) as { feature_size?: unknown };
  } catch (e) {
    throw new ModelError(`cannot read ${file}: ${(e as Error).message}`, { cause: e });
  }
  const n = json?.feature_size;
  if (n === undefined) return undefined;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 512) throw new ModelError(`${file}: feature_size must be an integer in 1..512, got ${JSON.stringify(n)}`);
  return n;
}

/**
 * The mel bins of a Whisper model: the nMels option, else `feature_size` of the
 * preprocessor_config.json beside the encoder, else the manifest entry's `mels` (when the files
 * come from the resolver), else the encoder's input shape when it is fixed. Exports name that
 * dimension symbolically ("feature_size"), so a model with none of these fails here with a
 * ModelError naming them instead of running 80 bins into a 128-bin encoder; a fixed encoder shape
 * that disagrees with the config fails too.
 */
export function resolveWhisperMels(o: ResolvedWhisperOptions, files: WhisperFiles, encoder: OnnxModel, model: string | undefined = o.model): number {
  const fromEncoder = encoderMels(encoder);
  const explicitFiles = !!(o.encoderFile || o.decoderFile || o.tokenizerFile);
  const configFile = path.join(path.dirname(files.encoder), WHISPER_PREPROCESSOR_CONFIG);
  let n: number | undefined;
  let from = '';
  if (o.nMels !== undefined) [n, from] = [o.nMels, 'the nMels option'];
  if (n === undefined) {
    const c = melsFromPreprocessorConfig(configFile);
    if (c !== undefined) [n, from] = [c, configFile];
  }
  if (n === undefined && !explicitFiles) {
    let mels: unknown;
    try {
      mels = model === undefined ? undefined : getModelEntry(model)?.mels;
    } catch {
      mels = undefined;
    }
    if (typeof mels === 'number') [n, from] = [mels, `the manifest entry ${model}`];
  }
  if (n === undefined && fromEncoder !== undefined) [n, from] = [fromEncoder, 'the encoder'];
  if (n === undefined) {
    throw new ModelError(
      `${encoder.path}: cannot tell how many mel bins this Whisper model takes (its input_features has no fixed size): put its ${WHISPER_PREPROCESSOR_CONFIG} (feature_size) beside it, give its manifest entry "mels", or set whisper.nMels (80 for tiny .. large-v2, 128 for large-v3 and turbo)`,
    );
  }
  if (fromEncoder !== undefined && fromEncoder !== n) throw new ModelError(`${encoder.path} takes ${fromEncoder} mel bins, but ${from} says ${n}`);
  return n;
}

export interface LoadedWhisper {
  sessions: WhisperSessions;
  tokenizer: WhisperTokenizer;
  features: WhisperFeatureExtractor;
}

/** Tokenizers read so far, by file (parsing tokenizer.json takes ~0.4 s; a job's back-transcription creates the engine once per 30 s unit). */
const tokenizers = new Map<string, { mtimeMs: number; size: number; tokenizer: WhisperTokenizer }>();

function tokenizerOf(file: string): WhisperTokenizer {
  const st = statSync(file, { throwIfNoEntry: false });
  const known = tokenizers.get(file);
  if (st && known && known.mtimeMs === st.mtimeMs && known.size === st.size) return known.tokenizer;
  const tokenizer = WhisperTokenizer.fromFile(file);
  if (st) tokenizers.set(file, { mtimeMs: st.mtimeMs, size: st.size, tokenizer });
  return tokenizer;
}

export async function loadWhisper(o: ResolvedWhisperOptions, env: EngineEnv): Promise<LoadedWhisper> {
  const files = resolveWhisperFiles(o, env);
  const sessionOpts = { device: env.device, threads: env.threads, logger: env.logger };
  // The encoder without onnxruntime's CPU arena: a 30 s window's activations (base: attention
  // maps of 8 x 1500 x 1500 per layer) would stay in the arena, ~700 MB for the rest of the job;
  // allocated per run they go back (~0.1 CPU s more per window). And loaded with last_hidden_state
  // as its only output: the exports also output those six attention maps, which onnxruntime then
  // holds to the end of each window (432 MB for base) although nothing reads them (@dub/onnx
  // graph-outputs.ts; a window's peak 698 -> 286 MB, the same hidden state bit for bit).
  const [encoder, decoder] = await Promise.all([
    env.sessions.get(files.encoder, { ...sessionOpts, cpuMemArena: false, outputs: [WHISPER_ENCODER_OUTPUT] }),
    // and the decoder with its output projection (the token embedding table, tied, kept as uint8
    // and dequantized whole on every step by the q8 exports) as DynamicQuantizeMatMul (@dub/onnx
    // dequant-matmul.ts): a step 13-15 ms -> 6 ms on 2 cores; DUB_ONNX_DEQUANT_MATMUL=float as shipped
    env.sessions.get(files.decoder, { ...sessionOpts, dequantizedMatMul: true }),
  ]);
  const tokenizer = tokenizerOf(files.tokenizer);
  const nMels = resolveWhisperMels(o, files, encoder, whisperModelOf(o, env.models));
  const sessions = new WhisperSessions(encoder, decoder, decoderLayout(decoder), nMels);
  return { sessions, tokenizer, features: new WhisperFeatureExtractor(nMels) };
}

class Whisper implements AsrEngine {
  readonly id = 'whisper';
  private readonly suppress: number[];
  /** suppress plus the other scripts' tokens, per locale (restrictScript). */
  private readonly suppressByLocale = new Map<string, number[]>();
  constructor(
    private readonly w: LoadedWhisper,
    private readonly o: ResolvedWhisperOptions,
    readonly label: string,
    /** The alignment heads that time words (wordTimestamps on a model openai lists them for and whose decoder outputs them). */
    private readonly alignmentHeads?: readonly (readonly [number, number])[],
  ) {
    this.suppress = suppressTokenIds(w.tokenizer, o.suppressTokens);
  }

  /** The tokens never sampled for a request in `locale`. */
  private suppressFor(locale: string): number[] {
    if (!this.o.restrictScript) return this.suppress;
    let ids = this.suppressByLocale.get(locale);
    if (!ids) {
      ids = [...new Set([...this.suppress, ...otherScriptTokens(this.w.tokenizer, locale)])].sort((a, b) => a - b);
      this.suppressByLocale.set(locale, ids);
    }
    return ids;
  }

  /** The sessions belong to the env's cache (released with the env). */
  async dispose(): Promise<void> {}

  async transcribe(audio: SpeechAudio, req: AsrRequest, ctx: StageContext): Promise<AsrEngineOutput> {
    const { sessions, tokenizer, features } = this.w;
    const language = whisperLanguageOf(req.locale, tokenizer.languages.size ? tokenizer.languages : new Map([['en', tokenizer.sot]]));
    if (!language) throw new RangeError(`this Whisper model has no language token for ${req.locale}`);
    // a window per chunk of the audio as it is, or (packGapSeconds) of the regions' speech packed together
    const gap = this.o.packGapSeconds;
    const chunks: (PackedChunk & { start: number; end: number })[] =
      gap === null
        ? groupRegions(req.regions, this.o.chunkSeconds).map((c) => ({ start: c.start, end: c.end, length: c.end - c.start, pieces: [{ start: c.start, end: c.end, at: 0 }] }))
        : packRegions(req.regions, this.o.chunkSeconds, gap).map((c) => ({ ...c, start: c.pieces[0]!.start, end: c.pieces[c.pieces.length - 1]!.end }));
    // say that decoding runs before the first chunk ends (else the progress still names the step before, e.g. extract_audio)
    reportProgress(ctx, 'asr', 0);
    const segments: AsrSegment[] = [];
    const skippedWindows: SkippedWindow[] = [];
    const silentWindows: { c: PackedChunk & { start: number; end: number }; decoded: Awaited<ReturnType<typeof decodeWithFallback>>; report: SkippedWindow }[] = [];
    const removedRepeats: RemovedRepeats[] = [];
    let detectedLanguage: DetectedLanguage | undefined;
    /** Put a decoded window's segments on the audio's timeline (i: its index among the chunks, -1: no seek after it). */
    const take = (c: PackedChunk & { start: number; end: number }, decoded: Awaited<ReturnType<typeof decodeWithFallback>>, report: SkippedWindow, i: number): void => {
      // packed: decoded on the window's own time, then put back on the audio's timeline (the silences between regions map to their edges)
      const offset = gap === null ? c.start : 0;
      // how far into the window the decoded segments reach
      let heardTo = 0;
      const decodedSegments = tokensToSegments(tokenizer, decoded.tokens, offset, c.length, req.locale);
      if (this.alignmentHeads) shortenLongWords(decodedSegments.flatMap((s) => s.words));
      // a loop every temperature decoded: its words are marked (`loop`), for the caller to leave out of what it measures
      const loops = markRepetitionLoops(decodedSegments.flatMap((s) => s.words));
      if (loops.length) ctx.logger.info({ ...report, loops: loops.map((l) => ({ words: l.end - l.start, period: l.period, copies: l.copies })) }, 'whisper: a repetition loop survived every temperature');
      const windowSegments: AsrSegment[] = [];
      for (const s of decodedSegments) {
        heardTo = Math.max(heardTo, s.end - offset);
        if (s.start >= offset + c.length) continue;
        s.end = Math.min(s.end, offset + c.length);
        for (const w of s.words) {
          w.start = Math.min(w.start, s.end);
          w.end = Math.min(w.end, s.end);
        }
        if (gap !== null) {
          // the words over the speech the segment covers, each inside one piece; the segment from
          // the piece it starts in (or the next) to the piece it ends in (or the one before)
          // words timed by the cross-attention each on their own; else by character share over the speech
          s.words = s.words.every((w) => w.aligned)
            ? s.words.map((w) => {
                const start = unpackTime(c, w.start, 'start');
                return { ...w, start: round3(start), end: round3(Math.max(start, unpackTime(c, w.end, 'end'))) };
              })
            : unpackWords(c, s.start, s.end, s.words).map((w) => ({ ...w, start: round3(w.start), end: round3(w.end) }));
          [s.start, s.end] = [round3(unpackTime(c, s.start, 'start')), round3(Math.max(unpackTime(c, s.start, 'start'), unpackTime(c, s.end, 'end')))];
        }
        windowSegments.push(s);
      }
      if (req.removeLoopRepeats && loops.length) {
        // a transcript to dub: the speaker said the phrase once (the repeats go, the removal is listed)
        const d = dropLoopRepeats(windowSegments, req.locale);
        segments.push(...d.segments);
        removedRepeats.push(...d.removed);
        // info, not warn: the removal is in the result (removedRepeats, the transcript's `removed`),
        // which callers report (dub run lists it among its warnings, on a resumed run too)
        for (const r of d.removed) ctx.logger.info({ start: r.start, end: r.end, kept: r.kept, removed: r.text, copies: r.copies }, "whisper: a repetition loop's repeats were removed from the transcript");
      } else segments.push(...windowSegments);
      if (gap !== null && i >= 0) {
        // openai's seek: Whisper may end a window before its audio does; the regions that start
        // after the last segment it decoded there are decoded again, in a window of their own
        const rest = c.pieces.filter((p) => p.at >= heardTo);
        if (rest.length && rest.length < c.pieces.length) {
          const again = packRegions(rest.map((p) => ({ start: p.start, end: p.end, probability: 1 })), this.o.chunkSeconds, gap)[0]!;
          chunks.splice(i + 1, 0, { ...again, start: again.pieces[0]!.start, end: again.pieces[again.pieces.length - 1]!.end });
          ctx.logger.debug({ start: c.start, end: c.end, heardTo, again: rest.length }, 'whisper: regions after the last segment decoded again');
        }
      }
    };
    for (let i = 0; i < chunks.length; i++) {
      throwIfAborted(ctx.signal);
      const c = chunks[i]!;
      const samples = gap === null ? await audio.readSeconds(c.start, c.end) : await packedSamples(audio, c);
      const encoded = await sessions.encode(features.extract(samples));
      if (i === 0 && this.o.detectLanguage && tokenizer.languages.size > 0) {
        const g = await detectLanguageFromEncoding(sessions, tokenizer, encoded);
        detectedLanguage = { language: g.language, probability: g.probability };
        ctx.logger.debug({ detected: g.language, probability: g.probability, requested: language }, 'whisper language detection');
      }
      const decoded = await decodeWithFallback(sessions, tokenizer, encoded, {
        language,
        timestamps: this.o.timestamps,
        maxNewTokens: maxNewTokensFor(this.o, c.length),
        suppress: this.suppressFor(req.locale),
        suppressBlank: this.o.suppressBlank,
        ...this.o.fallback,
        seed: i,
        ...(this.alignmentHeads ? { alignmentHeads: this.alignmentHeads, audioSeconds: c.length } : {}),
        ...(ctx.signal ? { signal: ctx.signal } : {}),
      });
      const report = { start: c.start, end: c.end, noSpeechProbability: decoded.noSpeechProbability ?? 0, avgLogprob: decoded.avgLogprob, compressionRatio: decoded.compressionRatio, temperature: decoded.temperature };
      if (decoded.tried.length > 1) ctx.logger.debug({ ...report, tried: decoded.tried, allFailed: decoded.allFailed }, 'whisper: temperature fallback');
      if (decoded.silent) {
        skippedWindows.push(report);
        silentWindows.push({ c, decoded, report });
        ctx.logger.info(report, 'whisper: window skipped as no speech');
        reportProgress(ctx, 'asr', (i + 1) / chunks.length);
        continue;
      }
      take(c, decoded, report, i);
      reportProgress(ctx, 'asr', (i + 1) / chunks.length);
    }
    // Whisper judged every window that decoded words silent, though the regions (a VAD's) hold
    // speech: what it decoded there is kept rather than an empty transcript, each such window
    // marked `kept` (noSpeechFallback; separation artefacts or singing raise the no-speech
    // probability of real speech, e.g. 0.64 with an average log-probability of -1.11)
    const heard = () => segments.some((s) => s.words.length > 0 && s.text.trim() !== '');
    if (req.noSpeechFallback && !heard() && silentWindows.length) {
      for (const w of silentWindows) {
        const before = segments.length;
        take(w.c, w.decoded, w.report, -1);
        // kept: the window gave words (the report object is the one listed in skippedWindows)
        if (segments.slice(before).some((s) => s.words.length > 0 && s.text.trim() !== '')) w.report.kept = true;
      }
      if (heard()) ctx.logger.info({ windows: skippedWindows.filter((w) => w.kept).length }, 'whisper: every window was judged silent; what it decoded is kept (noSpeechFallback)');
    }
    return { segments, ...(detectedLanguage ? { detectedLanguage } : {}), ...(skippedWindows.length ? { skippedWindows } : {}), ...(removedRepeats.length ? { removedRepeats } : {}) };
  }
}

/** The samples of a packed window: each piece's, with silence before it up to its place. */
async function packedSamples(audio: SpeechAudio, c: PackedChunk): Promise<Float32Array> {
  const out = new Float32Array(Math.round(c.length * SPEECH_SAMPLE_RATE));
  for (const p of c.pieces) {
    const x = await audio.readSeconds(p.start, p.end);
    const at = Math.round(p.at * SPEECH_SAMPLE_RATE);
    out.set(x.subarray(0, Math.max(0, out.length - at)), at);
  }
  return out;
}

/** A Whisper engine over a model already loaded (tests give it scripted sessions: see WindowDecoder). */
export function whisperOver(w: LoadedWhisper, o: ResolvedWhisperOptions, label = 'Whisper'): AsrEngine {
  return new Whisper(w, o, label);
}

/** A Whisper engine with these options (ASR_ENGINES' `whisper` entry creates it; that entry says whether it can run). */
export async function createWhisper(o: ResolvedWhisperOptions, env: EngineEnv): Promise<AsrEngine> {
  const w = await loadWhisper(o, env);
  let heads: readonly (readonly [number, number])[] | undefined;
  if (o.wordTimestamps) {
    const model = o.encoderFile ? undefined : whisperModelOf(o, env.models);
    heads = alignmentHeadsOf(model);
    const outputs = w.sessions.decoder.outputNames;
    if (heads && !heads.every(([l]) => outputs.includes(`cross_attentions.${l}`))) heads = undefined;
    if (!heads) env.logger.info({ model }, 'whisper: no alignment heads for this model (or no cross_attentions output): words timed by character share');
  }
  return new Whisper(w, o, whisperLabel(o, env.models), heads);
}
