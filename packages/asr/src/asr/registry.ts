/**
 * Speech recognition engines in the one registry shape of @dub/core (DUB_ASR_ENGINE), imported
 * on first use: `auto` takes Whisper when its model resolves and it speaks the locale, else
 * pocketsphinx (English, when its binary and model are installed). An explicit engine that cannot
 * transcribe the locale throws AssetError `unsupported_source_language` naming what to install
 * (each entry's `installHint`). The entries are the only list: what each checks (`supports`,
 * loading nothing) and how it is built (`create`, importing its module on first use).
 */
import { AssetError, defineEngineRegistry, getLocale, resolveModelFile, type EngineHost, type EngineRegistry, type EngineSupport } from '@dub/core';
import type { EngineEnv } from '../engine-env.js';
import { isWhisperInstalled, whisperLabel, resolveWhisperOptions, whisperFileNames, whisperModelOf, WHISPER_DEFAULT_MODEL, WHISPER_INSTALL_HINT, type ResolvedWhisperOptions } from '../whisper/options.js';
import { whisperLanguageOf } from '../whisper/languages.js';
import { isPocketsphinxInstalled, resolvePocketsphinxOptions, type ResolvedPocketsphinxOptions } from './pocketsphinx.js';
import type { AsrEngine } from './types.js';

/** Options of every ASR engine, resolved. */
export interface ResolvedAsrEngineOptions {
  pocketsphinx: ResolvedPocketsphinxOptions;
  whisper: ResolvedWhisperOptions;
}

export type AsrEngineId = keyof ResolvedAsrEngineOptions;

/** What the ASR engines' `supports` see: where models are and, where the caller has them, the engines' resolved options (else their defaults). */
export interface AsrEngineHost extends EngineHost {
  engines?: Partial<ResolvedAsrEngineOptions>;
}

/** The env an ASR engine is created with. */
export type AsrEngineEnv = EngineEnv & AsrEngineHost;

/** Whether engine `id` could speak `locale` once installed (pocketsphinx: English; Whisper: its ~99 languages). */
function speaks(id: AsrEngineId, locale: string): boolean {
  return id === 'pocketsphinx' ? /^en(-|$)/.test(locale) : !!whisperLanguageOf(locale);
}

/** What to install so that the engines of `ids` that could speak `locale` run ("whisper: run `npm ci` ..."), for messages. */
export function asrInstallHints(locale: string, ids: readonly AsrEngineId[] = ASR_ENGINE_IDS): string[] {
  return ids.filter((id) => speaks(id, locale)).map((id) => `${id}: ${ASR_ENGINES.get(id).installHint}`);
}

/** The error of a locale no engine of `tried` can transcribe here, naming what to install. */
export function unsupportedSourceLanguage(locale: string, tried: readonly AsrEngineId[]): AssetError {
  const hints = asrInstallHints(locale, tried);
  const name = getLocale(locale)?.name ?? locale;
  return new AssetError(
    'unsupported_source_language',
    `no speech recognition engine for ${name} (${locale}) is installed and no source_srt was given; provide source_srt` + (hints.length ? `, or install one: ${hints.join('; ')}` : ''),
    { details: { locale, engines: [...tried] } },
  );
}

/** The model files Whisper loads with these options, the encoder first (its explicit files, else the model's from the resolver). */
function whisperFiles(o: ResolvedWhisperOptions, env: EngineHost): string[] {
  if (o.encoderFile && o.decoderFile && o.tokenizerFile) return [o.encoderFile, o.decoderFile, o.tokenizerFile];
  const model = whisperModelOf(o, env.models);
  const names = whisperFileNames(model, env.models);
  return [names.encoder, names.decoder, names.tokenizer].map((f) => resolveModelFile(model, f, env.models));
}


async function whisperSupport(locale: string | undefined, env: AsrEngineHost): Promise<EngineSupport> {
  const o = env.engines?.whisper ?? resolveWhisperOptions();
  const error = unsupportedSourceLanguage(locale ?? '', ['whisper']);
  if (!locale || !speaks('whisper', locale)) return { ok: false, silent: true, reason: `Whisper does not speak ${locale}`, error };
  if (!isWhisperInstalled(o, env.models)) return { ok: false, silent: true, reason: `no Whisper model here (${o.model === undefined ? `npm ci installs ${WHISPER_DEFAULT_MODEL}` : `npx dub models fetch ${o.model}`})`, error };
  const label = whisperLabel(o, env.models);
  return { ok: true, reason: `${label} is installed and speaks ${locale}`, files: whisperFiles(o, env), label };
}

async function pocketsphinxSupport(locale: string | undefined, env: AsrEngineHost): Promise<EngineSupport> {
  const o = env.engines?.pocketsphinx ?? resolvePocketsphinxOptions();
  const error = unsupportedSourceLanguage(locale ?? '', ['pocketsphinx']);
  if (!locale || !speaks('pocketsphinx', locale)) return { ok: false, silent: true, reason: 'pocketsphinx speaks English only', error };
  if (!isPocketsphinxInstalled(o)) return { ok: false, silent: true, reason: 'pocketsphinx is not installed here', error };
  return { ok: true, reason: `the engine installed here that speaks ${locale}` };
}

/** The manifest's Whisper models (their terms: OpenAI's MIT weights). */
const WHISPER_MODEL_IDS = ['whisper-base', 'whisper-small', 'whisper-base-q8', 'whisper-small-q8'] as const;

/** The manifest id of the Whisper model these options run (the named one, else the first installed of WHISPER_MODEL_PREFERENCE; explicit files count as their named model). */
function whisperModelId(env: AsrEngineHost): string {
  return whisperModelOf(env.engines?.whisper ?? resolveWhisperOptions(), env.models);
}

export const ASR_ENGINES: EngineRegistry<AsrEngine, ResolvedAsrEngineOptions, AsrEngineEnv> = defineEngineRegistry<AsrEngine, ResolvedAsrEngineOptions, AsrEngineEnv>({
  stage: 'asr',
  envVar: 'DUB_ASR_ENGINE',
  entries: [
    {
      id: 'whisper',
      label: 'Whisper',
      // OpenAI's MIT weights, float or q8: the model the options name
      weights: { models: WHISPER_MODEL_IDS, pick: (_locale, env) => whisperModelId(env) },
      installHint: WHISPER_INSTALL_HINT,
      supports: whisperSupport,
      create: async (o, env) => (await import('../whisper/engine.js')).createWhisper(o.whisper, env),
    },
    {
      id: 'pocketsphinx',
      label: 'pocketsphinx (en-US)',
      weights: { models: ['pocketsphinx-en-us'] },
      installHint: 'apt-get install pocketsphinx pocketsphinx-en-us (English only)',
      supports: pocketsphinxSupport,
      create: async (o, env) => (await import('./pocketsphinx.js')).createPocketsphinx(o.pocketsphinx, env),
    },
  ],
});

export const ASR_ENGINE_IDS = ASR_ENGINES.ids as readonly AsrEngineId[];

/** Order of preference when the engine is `auto`: the best engine that supports the locale wins. */
export const DEFAULT_ASR_PREFERENCE: readonly AsrEngineId[] = ASR_ENGINES.preference as readonly AsrEngineId[];
