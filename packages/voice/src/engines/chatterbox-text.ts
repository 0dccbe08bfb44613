/**
 * Chatterbox Multilingual's text side, as its reference code does it (resemble-ai/chatterbox
 * mtl_tts.py punc_norm and tokenizers/tokenizer.py MTLTokenizer; the ONNX export's inference
 * script): punctuation normalisation, lowercase, NFKD, the per-language step, the `[lang]` prefix,
 * spaces as `[SPACE]`, then the BPE of the export's tokenizer.json with its post-processor template
 * (the export wraps every text as [6563 exaggeration, 255 start-of-text, ...text..., 0
 * end-of-text, 6561, 6561 start-of-speech]). Sources: fixtures/chatterbox-signature.json.
 *
 * Per-language steps: Korean (Hangul syllables to Jamo) is algorithmic and done here. Chinese
 * (Cangjie codes with pkuseg segmentation), Japanese (kanji to hiragana with pykakasi), Hebrew
 * (diacritics with dicta) and Russian (stress marks) need dictionaries or models the reference
 * loads from Python packages; `prepareChatterboxText` reports them in `skipped` instead of
 * pretending to have applied them.
 */
import fs from 'node:fs';
import { bpeMerge, ModelError, ValidationError } from '@dub/core';

/** The 23 languages of Chatterbox Multilingual (mtl_tts.py SUPPORTED_LANGUAGES). */
export const CHATTERBOX_LANGUAGES = Object.freeze(['ar', 'da', 'de', 'el', 'en', 'es', 'fi', 'fr', 'he', 'hi', 'it', 'ja', 'ko', 'ms', 'nl', 'no', 'pl', 'pt', 'ru', 'sv', 'sw', 'tr', 'zh'] as const);
/** Languages whose reference step needs a dictionary or model not available to this engine. */
export const CHATTERBOX_UNPORTED_STEPS: Readonly<Record<string, string>> = Object.freeze({
  zh: 'Cangjie codes (Cangjie5_TC.json + pkuseg segmentation)',
  ja: 'kanji to hiragana (pykakasi)',
  he: 'diacritics (dicta)',
  ru: 'stress marks (russian_text_stresser)',
});

/** The reference's text step for `locale`'s language when it is not ported here (zh, ja, he, ru), else undefined. */
export function unportedTextStep(locale: string): { language: string; step: string } | undefined {
  const language = chatterboxLanguage(locale);
  const step = language ? CHATTERBOX_UNPORTED_STEPS[language] : undefined;
  return language && step ? { language, step } : undefined;
}

/**
 * What the tts engine record says when Chatterbox speaks `locale` without its language's reference
 * text step ("text step not ported for zh: Cangjie codes (...) (tokenized without it)"), else undefined.
 */
export function chatterboxTextStepNote(locale: string): string | undefined {
  const u = unportedTextStep(locale);
  return u ? `text step not ported for ${u.language}: ${u.step} (tokenized without it)` : undefined;
}

export const SPACE_TOKEN = '[SPACE]';

/** mtl_tts.py punc_norm: uncommon punctuation replaced, a full stop added where the text has no ending punctuation. */
export function puncNorm(text: string): string {
  if (text.length === 0) return 'You need to add some text for me to talk.';
  let t = text[0]!.toUpperCase() + text.slice(1);
  t = t.split(/\s+/).filter((w) => w !== '').join(' ');
  const replace: [string, string][] = [
    ['...', ', '],
    ['…', ', '],
    [':', ','],
    [' - ', ', '],
    [';', ', '],
    ['—', '-'],
    ['–', '-'],
    [' ,', ','],
    ['“', '"'],
    ['”', '"'],
    ['‘', "'"],
    ['’', "'"],
  ];
  for (const [a, b] of replace) t = t.split(a).join(b);
  t = t.replace(/ +$/, '');
  const enders = new Set(['.', '!', '?', '-', ',', '、', '，', '。', '？', '！']);
  if (!enders.has(t[t.length - 1] ?? '')) t += '.';
  return t;
}

/** tokenizer.py korean_normalize: Hangul syllables decomposed into leading/vowel/trailing Jamo. */
export function koreanNormalize(text: string): string {
  let out = '';
  for (const ch of text) {
    const c = ch.codePointAt(0)!;
    if (c < 0xac00 || c > 0xd7af) {
      out += ch;
      continue;
    }
    const base = c - 0xac00;
    out += String.fromCodePoint(0x1100 + Math.floor(base / (21 * 28)), 0x1161 + Math.floor((base % (21 * 28)) / 28));
    if (base % 28 > 0) out += String.fromCodePoint(0x11a7 + (base % 28));
  }
  return out.trim();
}

/** The contract locale's Chatterbox language ("pt-BR" -> "pt"; Norwegian Bokmål "nb-NO" -> "no", its name for it), or undefined when it has none. */
export function chatterboxLanguage(locale: string): string | undefined {
  const code = locale.split(/[-_]/)[0]!.toLowerCase();
  const lang = code === 'nb' ? 'no' : code;
  return (CHATTERBOX_LANGUAGES as readonly string[]).includes(lang) ? lang : undefined;
}

export interface PreparedText {
  /** The string the tokenizer encodes: "[lang]" + normalised text, spaces as [SPACE]. */
  text: string;
  /** The reference's per-language step when it could not be applied here (zh, ja, he, ru). */
  skipped?: string;
}

/** punc_norm, lowercase, NFKD, the language step, "[lang]" prefix, " " -> "[SPACE]" (MTLTokenizer.encode). */
export function prepareChatterboxText(text: string, language: string): PreparedText {
  const lang = language.toLowerCase();
  if (!(CHATTERBOX_LANGUAGES as readonly string[]).includes(lang)) throw new ValidationError(`Chatterbox Multilingual does not speak "${language}" (languages: ${CHATTERBOX_LANGUAGES.join(', ')})`, { field: 'locale' });
  let t = puncNorm(text).toLowerCase().normalize('NFKD');
  if (lang === 'ko') t = koreanNormalize(t);
  t = `[${lang}]${t}`.split(' ').join(SPACE_TOKEN);
  const skipped = CHATTERBOX_UNPORTED_STEPS[lang];
  return skipped ? { text: t, skipped } : { text: t };
}

interface TemplatePiece {
  SpecialToken?: { id: string };
  Sequence?: { id: string };
}

interface TokenizerJson {
  added_tokens?: { id: number; content: string }[];
  normalizer?: unknown;
  pre_tokenizer?: { type?: string } | null;
  post_processor?: { type?: string; single?: TemplatePiece[]; special_tokens?: Record<string, { ids: number[] }> } | null;
  model?: { type?: string; vocab?: Record<string, number>; merges?: (string | [string, string])[]; unk_token?: string | null; continuing_subword_prefix?: string | null; end_of_word_suffix?: string | null };
}

/**
 * A Hugging Face tokenizers BPE (the format of the export's tokenizer.json): added tokens split out
 * first (longest first), the rest pre-tokenized (none, Whitespace or WhitespaceSplit; others are
 * refused), each piece merged by merge rank, unknown symbols mapped to unk_token, and the
 * TemplateProcessing post-processor applied. Normalizers other than the Replace of " " with
 * [SPACE] (which prepareChatterboxText already did) are refused rather than ignored.
 */
export class BpeTokenizer {
  private readonly vocab: Map<string, number>;
  private readonly ranks = new Map<string, number>();
  private readonly added: Map<string, number>;
  private readonly addedPattern: RegExp | undefined;
  private readonly unk: number | undefined;
  private readonly preTokenizer: 'none' | 'whitespace' | 'whitespace-split';
  private readonly template: ({ ids: number[] } | 'A')[] | undefined;

  constructor(json: TokenizerJson, readonly source = 'tokenizer.json') {
    const m = json.model;
    if (!m || m.type !== 'BPE' || !m.vocab || !m.merges) throw new ModelError(`${source}: not a BPE tokenizer.json (model.type ${String(m?.type)})`);
    if (m.continuing_subword_prefix || m.end_of_word_suffix) throw new ModelError(`${source}: BPE with continuing_subword_prefix/end_of_word_suffix is not supported`);
    this.vocab = new Map(Object.entries(m.vocab));
    m.merges.forEach((x, i) => this.ranks.set(Array.isArray(x) ? `${x[0]} ${x[1]}` : x, i));
    this.added = new Map((json.added_tokens ?? []).map((t) => [t.content, t.id]));
    const keys = [...this.added.keys()].sort((a, b) => b.length - a.length);
    this.addedPattern = keys.length ? new RegExp(`(${keys.map((k) => k.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})`, 'u') : undefined;
    this.unk = m.unk_token ? (this.vocab.get(m.unk_token) ?? this.added.get(m.unk_token)) : undefined;
    this.checkNormalizer(json.normalizer);
    const pre = json.pre_tokenizer?.type;
    this.preTokenizer = !pre ? 'none' : pre === 'Whitespace' ? 'whitespace' : pre === 'WhitespaceSplit' ? 'whitespace-split' : (() => { throw new ModelError(`${source}: pre_tokenizer ${pre} is not supported`); })();
    const pp = json.post_processor;
    if (pp && pp.type !== 'TemplateProcessing') throw new ModelError(`${source}: post_processor ${String(pp.type)} is not supported`);
    if (pp?.single) {
      this.template = pp.single.map((p) => {
        if (p.Sequence) return 'A' as const;
        const st = p.SpecialToken && pp.special_tokens?.[p.SpecialToken.id];
        if (!st) throw new ModelError(`${source}: template token ${String(p.SpecialToken?.id)} has no special_tokens entry`);
        return { ids: st.ids };
      });
    }
  }

  static fromFile(file: string): BpeTokenizer {
    let json: TokenizerJson;
    try {
      json = JSON.parse(fs.readFileSync(file, 'utf8')) as TokenizerJson;
    } catch (e) {
      throw new ModelError(`${file}: cannot read the tokenizer (${(e as Error).message})`);
    }
    return new BpeTokenizer(json, file);
  }

  private checkNormalizer(n: unknown): void {
    if (n === null || n === undefined) return;
    const list = (n as { type?: string; normalizers?: unknown[] }).type === 'Sequence' ? ((n as { normalizers?: unknown[] }).normalizers ?? []) : [n];
    for (const x of list) {
      const r = x as { type?: string; pattern?: { String?: string }; content?: string };
      if (r.type === 'Replace' && r.pattern?.String === ' ' && r.content === SPACE_TOKEN) continue;
      throw new ModelError(`${this.source}: normalizer ${JSON.stringify(x)} is not supported`);
    }
  }

  /** The id of an added token (e.g. "[SPACE]", "[en]"), or undefined. */
  addedId(content: string): number | undefined {
    return this.added.get(content);
  }

  /** BPE of one pre-token by merge rank (lowest rank first, all its occurrences at once). */
  private bpe(piece: string): string[] {
    return bpeMerge(Array.from(piece), this.ranks);
  }

  private preTokenize(s: string): string[] {
    if (this.preTokenizer === 'none') return [s];
    if (this.preTokenizer === 'whitespace-split') return s.split(/\s+/u).filter((x) => x !== '');
    // Rust regex \w and \s (Unicode), as the tokenizers library's Whitespace pre-tokenizer: \w+|[^\w\s]+
    return s.match(/[\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}]+|[^\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}\s]+/gu) ?? [];
  }

  /** The ids of `text` (already prepared) without the post-processor's wrapping. */
  encodeText(text: string): { ids: number[]; unknown: string[] } {
    const ids: number[] = [];
    const unknown: string[] = [];
    const parts = this.addedPattern ? text.split(this.addedPattern) : [text];
    for (const part of parts) {
      if (part === '') continue;
      const a = this.added.get(part);
      if (a !== undefined) {
        ids.push(a);
        continue;
      }
      for (const pre of this.preTokenize(part)) {
        for (const tok of this.bpe(pre)) {
          const id = this.vocab.get(tok);
          if (id !== undefined) ids.push(id);
          else {
            unknown.push(tok);
            if (this.unk !== undefined) ids.push(this.unk);
          }
        }
      }
    }
    return { ids, unknown };
  }

  /** The ids the model takes: the text's, wrapped by the template (when the tokenizer has one). */
  encode(text: string): { ids: number[]; unknown: string[] } {
    const t = this.encodeText(text);
    if (!this.template) return t;
    return { ids: this.template.flatMap((p) => (p === 'A' ? t.ids : p.ids)), unknown: t.unknown };
  }
}
