/**
 * Glossaries in translation: terms with a fixed translation, or kept as they are (@dub/core
 * glossary.ts has the schema and the API's checks). How each engine applies them:
 *
 * - placeholder masking (`maskTerms` / `unmaskTerms`, BaseTranslator's default, so apertium,
 *   LibreTranslate and any future offline model get it): every term found in a segment is replaced
 *   by a made-up word (`Zxqab`, `Zxqac`, ...) the engine cannot know and passes through unchanged
 *   (apertium as an unknown word, `*Zxqab`, whose mark it strips), and the placeholder in the
 *   output is replaced by the term's translation (or the term itself, kept);
 * - the OpenAI-compatible LLM: the terms of the batch in the prompt (openai-prompt.ts);
 * - DeepL: the term's translation inside `<keep>` tags DeepL leaves untranslated
 *   (`tag_handling: xml`, `ignore_tags: keep`; deepl.ts).
 *
 * Terms are found with one Aho-Corasick automaton over the (case-folded) text: time linear in the
 * text plus the matches, whatever terms a client sends. A term matches as a whole word (not inside
 * a longer word), except in scripts written without spaces (Han, kana, Thai); of overlapping
 * matches the leftmost, then the longest, wins.
 *
 * `checkGlossaryLine` says per line which terms of the source the translation carries; the
 * pipeline stores it on the script's lines and the quality report re-checks it on the spoken text.
 */
import { foldCase, glossaryTarget, type Glossary, type GlossaryEntry, type GlossaryLineTerm } from '@dub/core';

export interface TermMatch {
  /** Index of the pattern (the glossary entry, for a matcher built from a glossary). */
  index: number;
  start: number;
  end: number;
}

interface Pattern {
  text: string;
  caseSensitive: boolean;
}

const WORD = /[\p{L}\p{N}\p{M}]/u;
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;

/** Whether a match may end/start between `outside` and `inside` (its own first or last character). */
function boundary(outside: string | undefined, inside: string): boolean {
  if (outside === undefined || !WORD.test(outside) || !WORD.test(inside)) return true;
  return UNSPACED.test(outside) || UNSPACED.test(inside);
}

/** Aho-Corasick over UTF-16 code units of case-folded text. */
export class TermMatcher {
  private readonly next: Map<string, number>[] = [new Map()];
  private readonly fail: number[] = [0];
  /** Longest pattern ending at the node, and the next node (by failure links) that ends one. */
  private readonly out: number[][] = [[]];
  private readonly dict: number[] = [-1];
  private readonly patterns: Pattern[];

  constructor(patterns: readonly Pattern[]) {
    this.patterns = patterns.map((p) => ({ text: p.text, caseSensitive: p.caseSensitive }));
    this.patterns.forEach((p, i) => {
      const t = foldCase(p.text);
      if (t === '') return;
      let node = 0;
      for (let k = 0; k < t.length; k++) {
        const c = t[k]!;
        let n = this.next[node]!.get(c);
        if (n === undefined) {
          n = this.next.length;
          this.next.push(new Map());
          this.fail.push(0);
          this.out.push([]);
          this.dict.push(-1);
          this.next[node]!.set(c, n);
        }
        node = n;
      }
      this.out[node]!.push(i);
    });
    // Breadth first: failure links and dictionary links.
    const queue: number[] = [];
    for (const n of this.next[0]!.values()) queue.push(n);
    for (let qi = 0; qi < queue.length; qi++) {
      const u = queue[qi]!;
      for (const [c, v] of this.next[u]!) {
        let f = this.fail[u]!;
        while (f !== 0 && !this.next[f]!.has(c)) f = this.fail[f]!;
        const w = this.next[f]!.get(c);
        this.fail[v] = w !== undefined && w !== v ? w : 0;
        const fv = this.fail[v]!;
        this.dict[v] = this.out[fv]!.length ? fv : this.dict[fv]!;
        queue.push(v);
      }
    }
  }

  static ofGlossary(glossary: Glossary): TermMatcher {
    return new TermMatcher(glossary.map((e) => ({ text: e.term, caseSensitive: e.case_sensitive === true })));
  }

  /** Non-overlapping whole-word matches, leftmost then longest first, in text order. */
  find(text: string): TermMatch[] {
    if (this.next.length === 1 || text === '') return [];
    const folded = foldCase(text);
    const found: TermMatch[] = [];
    let node = 0;
    for (let k = 0; k < folded.length; k++) {
      const c = folded[k]!;
      while (node !== 0 && !this.next[node]!.has(c)) node = this.fail[node]!;
      node = this.next[node]!.get(c) ?? 0;
      // A whole word ends here only at a boundary (the same for every pattern ending here).
      if (!boundary(text[k + 1], text[k]!)) continue;
      // The longest acceptable pattern ending here (the chain visits longer ones first).
      for (let n = this.out[node]!.length ? node : this.dict[node]!; n > 0; n = this.dict[n]!) {
        let hit: TermMatch | undefined;
        for (const i of this.out[n]!) {
          const p = this.patterns[i]!;
          const start = k + 1 - p.text.length;
          const end = k + 1;
          if (p.caseSensitive && text.slice(start, end) !== p.text) continue;
          if (!boundary(text[start - 1], text[start]!)) continue;
          hit = { index: i, start, end };
          break;
        }
        if (hit) {
          found.push(hit);
          break;
        }
      }
    }
    // Leftmost, then longest, without overlaps.
    found.sort((a, b) => a.start - b.start || b.end - a.end);
    const out: TermMatch[] = [];
    let reach = 0;
    for (const m of found) {
      if (m.start < reach) continue;
      out.push(m);
      reach = m.end;
    }
    return out;
  }
}

const matchers = new WeakMap<Glossary, TermMatcher>();

/** The matcher of a glossary (built once per glossary object). */
export function glossaryMatcher(glossary: Glossary): TermMatcher {
  let m = matchers.get(glossary);
  if (!m) {
    m = TermMatcher.ofGlossary(glossary);
    matchers.set(glossary, m);
  }
  return m;
}

/** The glossary's entries that occur in any of the texts, in glossary order. */
export function termsIn(texts: readonly string[], glossary: Glossary | undefined): GlossaryEntry[] {
  if (!glossary?.length) return [];
  const m = glossaryMatcher(glossary);
  const used = new Set<number>();
  for (const t of texts) for (const x of m.find(t)) used.add(x.index);
  return glossary.filter((_, i) => used.has(i));
}

// ------------------------------------------------------------------ placeholder masking

/** One masked term: its placeholder and what replaces it in the output. */
export interface MaskSlot {
  placeholder: string;
  entry: GlossaryEntry;
  /** The term as written in the source. */
  source: string;
}

export interface MaskedText {
  text: string;
  slots: MaskSlot[];
}

const ALPHA = 'abcdefghijklmnopqrstuvwxyz';
const PLACEHOLDER_RE = /zxq[a-z]{2}/gi;

/**
 * The default placeholder of slot `i`: a made-up capitalised word of letters only (`Zxqab`), which
 * rule-based engines take as an unknown proper noun and neural ones copy; 676 per segment.
 */
export function defaultPlaceholder(i: number): string | undefined {
  if (i >= ALPHA.length * ALPHA.length) return undefined;
  return `Zxq${ALPHA[Math.floor(i / ALPHA.length)]}${ALPHA[i % ALPHA.length]}`;
}

/**
 * Replace every glossary term in `text` by a placeholder. A text that already holds something
 * looking like a placeholder is left as it is (nothing masked), as are terms past the last one.
 */
export function maskTerms(text: string, glossary: Glossary, placeholder: (i: number) => string | undefined = defaultPlaceholder): MaskedText {
  const matches = glossaryMatcher(glossary).find(text);
  PLACEHOLDER_RE.lastIndex = 0;
  if (!matches.length || PLACEHOLDER_RE.test(text)) return { text, slots: [] };
  let out = '';
  let at = 0;
  const slots: MaskSlot[] = [];
  for (const m of matches) {
    const ph = placeholder(slots.length);
    if (ph === undefined) break;
    out += text.slice(at, m.start) + ph;
    slots.push({ placeholder: ph, entry: glossary[m.index]!, source: text.slice(m.start, m.end) });
    at = m.end;
  }
  return { text: out + text.slice(at), slots };
}

/** What a slot becomes in the output: the translation, or the term as the source wrote it (keep). */
function replacement(slot: MaskSlot, sentenceStart: boolean): string {
  if (slot.entry.keep) return slot.source;
  const t = glossaryTarget(slot.entry);
  return sentenceStart && !slot.entry.case_sensitive ? t.charAt(0).toUpperCase() + t.slice(1) : t;
}

/**
 * Put the terms back where the engine left the placeholders (matched case-insensitively, once
 * each). `lost`: the slots whose placeholder did not come back.
 */
export function unmaskTerms(output: string, slots: readonly MaskSlot[]): { text: string; lost: MaskSlot[] } {
  if (!slots.length) return { text: output, lost: [] };
  const byKey = new Map(slots.map((s) => [s.placeholder.toLowerCase(), s]));
  const used = new Set<MaskSlot>();
  const text = output.replace(PLACEHOLDER_RE, (whole, offset: number) => {
    const slot = byKey.get(whole.toLowerCase());
    if (!slot || used.has(slot)) return whole;
    used.add(slot);
    const before = output.slice(0, offset).trimEnd();
    return replacement(slot, before === '' || /[.!?¿¡]$/.test(before));
  });
  return { text, lost: slots.filter((s) => !used.has(s)) };
}

/**
 * The glossary applied without a translation engine: each term replaced by its translation (a kept
 * term stays). For one language on both sides (no translation; en-US -> en-GB "color" -> "colour").
 */
export function substituteTerms(text: string, glossary: Glossary | undefined): string {
  if (!glossary?.length) return text;
  const m = maskTerms(text, glossary);
  return m.slots.length ? unmaskTerms(m.text, m.slots).text : text;
}

// ------------------------------------------------------------------ per-line check

/**
 * The glossary terms found in `source` and whether `output` carries each (its expected target as a
 * whole word, case-insensitively unless the entry is case sensitive). One entry per term found.
 */
export function checkGlossaryLine(source: string, output: string, glossary: Glossary | undefined, engine?: string): GlossaryLineTerm[] {
  const entries = termsIn([source], glossary);
  if (!entries.length) return [];
  const targets = new TermMatcher(entries.map((e) => ({ text: glossaryTarget(e), caseSensitive: e.case_sensitive === true })));
  const present = new Set(targets.find(output).map((m) => m.index));
  return entries.map((e, i) => {
    const expected = glossaryTarget(e);
    const applied = present.has(i);
    return {
      term: e.term,
      expected,
      keep: e.keep === true,
      applied,
      ...(applied ? {} : { reason: `the translation does not contain "${expected}"${engine ? ` (${engine} did not carry it)` : ''}` }),
    };
  });
}

/** A line's glossary result checked again on the text spoken (after studio edits or shortening). */
export function recheckGlossaryLine(line: readonly GlossaryLineTerm[], text: string): GlossaryLineTerm[] {
  if (!line.length) return [];
  const targets = new TermMatcher(line.map((t) => ({ text: t.expected, caseSensitive: false })));
  const present = new Set(targets.find(text).map((m) => m.index));
  return line.map((t, i) => {
    const applied = present.has(i);
    const { reason: _r, ...rest } = t;
    return { ...rest, applied, ...(applied ? {} : { reason: t.applied ? `the spoken text does not contain "${t.expected}" (edited or shortened)` : (t.reason ?? `the spoken text does not contain "${t.expected}"`) }) };
  });
}
