/**
 * Which apertium translation directions are installed and how a locale pair maps onto them.
 * Mode names are `<src>-<tgt>` with ISO 639-1 or 639-3 codes and an optional `_VARIANT` on either
 * side (e.g. `eng-spa`, `spa-eng_US`, `en-es`). A pair with no direct mode is routed through a
 * pivot language (Spanish by default) when both legs are installed, e.g. ca -> es -> en.
 */
import { getLocale } from '@dub/core';

export interface ApertiumMode {
  name: string;
  source: string;
  sourceVariant?: string;
  target: string;
  targetVariant?: string;
}

const MODE = /^([a-z]{2,3})(?:_([A-Za-z]+))?-([a-z]{2,3})(?:_([A-Za-z]+))?$/;

export function parseModeName(name: string): ApertiumMode | undefined {
  const m = MODE.exec(name.trim());
  if (!m) return undefined;
  return { name: name.trim(), source: m[1]!, ...(m[2] ? { sourceVariant: m[2] } : {}), target: m[3]!, ...(m[4] ? { targetVariant: m[4] } : {}) };
}

/** Parse `apertium -l` output: one mode per line; lines that are not translation modes are skipped. */
export function parseModeList(text: string): ApertiumMode[] {
  return text.split('\n').map(parseModeName).filter((m): m is ApertiumMode => m !== undefined);
}

/**
 * Language codes apertium may use for a contract locale (639-1, 639-3 and macrolanguage forms):
 * Croatian is `hbs` (Serbo-Croatian, apertium-hbs-eng, with an `_HR` target variant), Malay `zlm`
 * (apertium-ind-zlm), Norwegian Bokmål `nob` (apertium-dan-nor and apertium-swe-nor; their `nno`
 * modes are Nynorsk, which nb-NO is not).
 */
export function apertiumCodes(locale: string): string[] {
  const l = getLocale(locale);
  const lang = (l?.iso639_1 || locale.split('-')[0] || '').toLowerCase();
  const codes = new Set<string>([lang]);
  if (l?.iso639_3) codes.add(l.iso639_3);
  const extra: Record<string, string[]> = { zh: ['zho', 'cmn'], nb: ['nob', 'nor'], ms: ['msa', 'zlm'], hr: ['hbs'], ar: ['ara'], fil: ['tgl'] };
  for (const c of extra[lang] ?? []) codes.add(c);
  codes.delete('');
  return [...codes];
}

function region(locale: string): string | undefined {
  return locale.split('-')[1];
}

function matches(code: string, locale: string): boolean {
  return apertiumCodes(locale).includes(code);
}

/** Best direct mode: the target variant equal to the target's region, then no variant, then any. */
function pickDirect(modes: readonly ApertiumMode[], srcCodes: (c: string) => boolean, tgtCodes: (c: string) => boolean, targetRegion?: string): ApertiumMode | undefined {
  const cands = modes.filter((m) => srcCodes(m.source) && tgtCodes(m.target) && !m.sourceVariant);
  const rank = (m: ApertiumMode) => (m.targetVariant && m.targetVariant === targetRegion ? 0 : m.targetVariant ? 2 : 1);
  return cands.sort((a, b) => rank(a) - rank(b))[0];
}

/** The modes to run in order (one, or two through the pivot), or undefined when no route exists. */
export function findRoute(modes: readonly ApertiumMode[], sourceLocale: string, targetLocale: string, pivot = 'spa'): ApertiumMode[] | undefined {
  const isSrc = (c: string) => matches(c, sourceLocale);
  const isTgt = (c: string) => matches(c, targetLocale);
  // The same language on both sides (en-US -> en-US, es-ES -> es-MX): never out to the pivot and
  // back; only a direct mode between its variants would do (see same-language.ts).
  if (apertiumCodes(sourceLocale).some((c) => isTgt(c))) {
    const variant = modes.find((m) => isSrc(m.source) && isTgt(m.target) && !m.sourceVariant && m.targetVariant === region(targetLocale));
    return variant ? [variant] : undefined;
  }
  const direct = pickDirect(modes, isSrc, isTgt, region(targetLocale));
  if (direct) return [direct];
  const pivotCodes = new Set([pivot, ...(pivot === 'spa' ? ['es'] : [])]);
  const isPivot = (c: string) => pivotCodes.has(c);
  if (isSrc(pivot) || isTgt(pivot)) return undefined;
  const first = pickDirect(modes, isSrc, isPivot);
  const second = pickDirect(modes, isPivot, isTgt, region(targetLocale));
  return first && second ? [first, second] : undefined;
}
