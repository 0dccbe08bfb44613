/**
 * Licences of the weights the engines run, as data (issue #25): every entry of
 * models/manifest.json (`models`, the files made here from them in `derived`, and the data that
 * Debian packages ship in `system`) has `terms`: an SPDX id or a named custom licence, whether a
 * business may use it commercially (`yes`, `no`, `unclear`), the attribution its licence requires,
 * and the URL of the authors' statement it rests on. Engine records carry the licence id and the
 * commercial flag of what ran; the model policy (`--model-policy`, DUB_MODEL_POLICY) says which
 * weights may run at all.
 */
import { ValidationError } from './errors.js';

/** Whether a business may use a weight commercially, by its authors' own words. */
export type Commercial = 'yes' | 'no' | 'unclear';
export const COMMERCIAL_VALUES: readonly Commercial[] = Object.freeze(['yes', 'no', 'unclear']);

/** The terms of a weight (or of the data a system package ships). */
export interface ModelTerms {
  /** SPDX licence id (MIT, Apache-2.0, CC-BY-4.0, CC0-1.0, GPL-3.0-or-later, ...). Exactly one of spdx and custom. */
  spdx?: string;
  /** A named licence that has no SPDX id (e.g. "Demucs weights: scientific purposes only"). */
  custom?: string;
  commercial: Commercial;
  /** The credit the licence requires wherever the weight is used (CC-BY); `dub run` writes it into NOTICE.txt. */
  attribution?: string;
  /** The authors' own statement the terms rest on (README, model card, issue, licence file). */
  url: string;
  /** Further statements (a dataset's licence page, a second issue). */
  also?: string[];
  /** What the terms mean here, where the id alone does not say it (a fine-tune of a restricted base, ...). */
  note?: string;
}

/** The licence id of terms: the SPDX id, else the custom licence's name. */
export function licenseId(t: ModelTerms): string {
  return t.spdx ?? t.custom ?? 'unknown';
}

/** One line about terms: "CC-BY-4.0, commercial use yes". */
export function termsLine(t: ModelTerms): string {
  return `${licenseId(t)}, commercial use ${t.commercial}`;
}

/** What is wrong with terms (empty: well-formed). */
export function termsProblems(t: unknown): string[] {
  if (typeof t !== 'object' || t === null) return ['no terms'];
  const x = t as Partial<ModelTerms>;
  const out: string[] = [];
  if ((x.spdx === undefined) === (x.custom === undefined)) out.push('exactly one of spdx and custom');
  if (x.spdx !== undefined && !/^[A-Za-z0-9][A-Za-z0-9.+-]*$/.test(x.spdx)) out.push(`spdx "${x.spdx}" is not an SPDX id`);
  if (x.custom !== undefined && (typeof x.custom !== 'string' || x.custom.length < 8)) out.push('custom must name the licence');
  if (!COMMERCIAL_VALUES.includes(x.commercial as Commercial)) out.push('commercial must be yes, no or unclear');
  if (typeof x.url !== 'string' || !/^https:\/\//.test(x.url)) out.push('url must be the https URL of the statement');
  if (x.attribution !== undefined && (typeof x.attribution !== 'string' || x.attribution.length < 20)) out.push('attribution must be the credit text');
  // A licence that requires credit has its credit text.
  if (/^CC-BY/.test(x.spdx ?? '') && !x.attribution) out.push(`${x.spdx} requires an attribution`);
  if (x.commercial !== 'yes' && !x.note && !x.custom) out.push('terms that are not "yes" say why (note)');
  return out;
}

/** Which weights may run: `commercial` only those whose terms are `yes`; `any` every one (warned about). */
export type ModelPolicy = 'commercial' | 'any';
export const MODEL_POLICIES: readonly ModelPolicy[] = Object.freeze(['any', 'commercial']);

/** The policy of DUB_MODEL_POLICY (unset: `any`); another value is a ValidationError. */
export function modelPolicyFromEnv(env: Record<string, string | undefined> = process.env): ModelPolicy {
  const raw = env.DUB_MODEL_POLICY?.trim();
  if (!raw) return 'any';
  if (!(MODEL_POLICIES as readonly string[]).includes(raw)) throw new ValidationError(`DUB_MODEL_POLICY="${raw}" is not a model policy: ${MODEL_POLICIES.join(', ')}`, { field: 'DUB_MODEL_POLICY' });
  return raw as ModelPolicy;
}

/** Whether `policy` lets weights with these terms run (no terms: no weights, always). */
export function policyAllows(policy: ModelPolicy, terms: ModelTerms | undefined | null): boolean {
  return policy === 'any' || !terms || terms.commercial === 'yes';
}

/**
 * An explicit engine choice that the model policy refuses: a ValidationError (`dub run` exits 2
 * before any work), naming the weight's licence, its statement and the alternatives.
 */
export class ModelPolicyError extends ValidationError {
  constructor(message: string, opts: { details?: Record<string, unknown> } = {}) {
    super(message, { field: 'DUB_MODEL_POLICY', ...opts });
  }
}
