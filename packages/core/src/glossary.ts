/**
 * Glossaries (an extension of the contract's API): terms of an asset (and of one of its dubbings)
 * with their translation, or marked "keep as is". Given at creation, editable later, carried in
 * the prepare jobs (`VersionSpec.glossary`) to the translation engines (@dub/translate glossary.ts),
 * and reported per line (`ScriptSegment.glossary`, the quality report's `lines[].glossary`).
 *
 * `parseGlossary` checks a client's list in time linear in its size: the limits below bound the
 * number of terms and their lengths, and duplicates are found with a Set of the folded terms.
 */
import { Type, type Static } from '@sinclair/typebox';
import { ValidationError } from './errors.js';

export const GLOSSARY_LIMITS = Object.freeze({ maxTerms: 200, maxTermChars: 100, maxTranslationChars: 200 });

export const GlossaryEntrySchema = Type.Object({
  /** The source-language term, matched as a whole word (case-insensitively unless case_sensitive). */
  term: Type.String({ minLength: 1, maxLength: GLOSSARY_LIMITS.maxTermChars }),
  /** Its fixed translation in the target language. */
  translation: Type.Optional(Type.String({ minLength: 1, maxLength: GLOSSARY_LIMITS.maxTranslationChars })),
  /** Keep the term as it is (a brand or a name): instead of translation. */
  keep: Type.Optional(Type.Literal(true)),
  /** Match the term's case exactly (default false). */
  case_sensitive: Type.Optional(Type.Boolean()),
});
export type GlossaryEntry = Static<typeof GlossaryEntrySchema>;

export const GlossarySchema = Type.Array(GlossaryEntrySchema, { maxItems: GLOSSARY_LIMITS.maxTerms });
export type Glossary = Static<typeof GlossarySchema>;

/** One glossary term found in a line's source text, and whether the line's translation carries it. */
export const GlossaryLineTermSchema = Type.Object({
  term: Type.String(),
  /** What the translation should say: the entry's translation, or the term itself (keep). */
  expected: Type.String(),
  keep: Type.Boolean(),
  applied: Type.Boolean(),
  /** Why not applied (the engine dropped it, an edit removed it). */
  reason: Type.Optional(Type.String()),
});
export type GlossaryLineTerm = Static<typeof GlossaryLineTermSchema>;
export const GlossaryLineSchema = Type.Array(GlossaryLineTermSchema);

/** What the translation of `e.term` should say. */
export function glossaryTarget(e: GlossaryEntry): string {
  return e.keep ? e.term : (e.translation ?? e.term);
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f\u2028\u2029]/;

/**
 * A client's glossary checked and normalised (terms and translations trimmed): 400
 * (ValidationError naming `field[i].part`) for anything else. Linear in the input's size.
 */
export function parseGlossary(value: unknown, field = 'glossary'): Glossary {
  if (!Array.isArray(value)) throw new ValidationError(`${field} must be an array of {term, translation} or {term, keep: true}`, { field });
  const L = GLOSSARY_LIMITS;
  if (value.length > L.maxTerms) throw new ValidationError(`${field} has ${value.length} terms; at most ${L.maxTerms} are allowed`, { field });
  const seen = new Map<string, number>();
  const out: Glossary = [];
  value.forEach((raw, i) => {
    const f = `${field}[${i}]`;
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new ValidationError(`${f} must be an object {term, translation} or {term, keep: true}`, { field: f });
    const r = raw as Record<string, unknown>;
    const text = (v: unknown, part: string, max: number): string => {
      if (typeof v !== 'string') throw new ValidationError(`${f}.${part} must be a string`, { field: `${f}.${part}` });
      if (v.length > max * 4) throw new ValidationError(`${f}.${part} is longer than ${max} characters`, { field: `${f}.${part}` });
      const t = v.trim();
      if (t === '') throw new ValidationError(`${f}.${part} must not be empty`, { field: `${f}.${part}` });
      if (t.length > max) throw new ValidationError(`${f}.${part} is ${t.length} characters; at most ${max} are allowed`, { field: `${f}.${part}` });
      if (CONTROL.test(t)) throw new ValidationError(`${f}.${part} must be one line without control characters`, { field: `${f}.${part}` });
      return t;
    };
    const term = text(r.term, 'term', L.maxTermChars);
    if (r.keep !== undefined && r.keep !== true && r.keep !== false) throw new ValidationError(`${f}.keep must be true or absent`, { field: `${f}.keep` });
    if (r.case_sensitive !== undefined && typeof r.case_sensitive !== 'boolean') throw new ValidationError(`${f}.case_sensitive must be a boolean`, { field: `${f}.case_sensitive` });
    const keep = r.keep === true;
    const hasTranslation = r.translation !== undefined && r.translation !== null;
    if (keep && hasTranslation) throw new ValidationError(`${f}: give either translation or keep: true, not both`, { field: f });
    if (!keep && !hasTranslation) throw new ValidationError(`${f}: give a translation, or keep: true to keep "${term}" as it is`, { field: f });
    const caseSensitive = r.case_sensitive === true;
    const key = caseSensitive ? `s:${term}` : `i:${foldCase(term)}`;
    const dup = seen.get(key);
    if (dup !== undefined) throw new ValidationError(`${f}.term "${term}" repeats ${field}[${dup}].term`, { field: `${f}.term` });
    seen.set(key, i);
    const entry: GlossaryEntry = { term };
    if (keep) entry.keep = true;
    else entry.translation = text(r.translation, 'translation', L.maxTranslationChars);
    if (caseSensitive) entry.case_sensitive = true;
    out.push(entry);
  });
  return out;
}

/**
 * Lower case, one code point at a time, keeping a code point whose lower case has another length
 * (so an index into the folded text is an index into the original).
 */
export function foldCase(text: string): string {
  let out = '';
  for (const c of text) {
    const l = c.toLowerCase();
    out += l.length === c.length ? l : c;
  }
  return out;
}

/** The asset's glossary with a dubbing's on top (a dubbing's entry replaces the asset's for the same term). */
export function mergeGlossaries(asset: Glossary | undefined, dubbing: Glossary | undefined): Glossary | undefined {
  if (!dubbing?.length) return asset?.length ? asset : undefined;
  if (!asset?.length) return dubbing;
  const key = (e: GlossaryEntry) => (e.case_sensitive ? `s:${e.term}` : `i:${foldCase(e.term)}`);
  const own = new Set(dubbing.map(key));
  return [...asset.filter((e) => !own.has(key(e))), ...dubbing];
}

/**
 * The wire body of GET/PUT /v1/versions/{id}/glossary (the API answers it, the studio reads it):
 * the asset's glossary and the version's language's.
 */
export interface VersionGlossaryBody {
  asset_id: string;
  dubbing_id: string;
  locale: string;
  asset: Glossary;
  language: Glossary;
  /** Whether this access may change the asset's (API key: yes; studio link: no). */
  can_edit_asset: boolean;
}
