/**
 * Condensing a source line by leaving out what carries no content (issue 26, item 4), for a
 * shorter dubbed line where the pair's engine can give none (apertium: no length budget, no
 * n-best): the condensed source is translated again by the same engine. The rules are those of
 * subtitling's text reduction (Díaz Cintas & Remael 2007, "Audiovisual Translation: Subtitling",
 * ch. 6: hesitations, fillers and discourse markers, and repetitions are the first to go), fixed
 * from that practice, not fitted to any recording. Only these, and only where they are set off from
 * the sentence (by a comma or the sentence's edge), so that no word the meaning needs is removed:
 *
 *   - hesitation sounds: um, uh, er, erm, hmm, mm, uhm (anywhere);
 *   - interjections and discourse markers set off by a comma: "oh,", "ah,", "well,", "so,",
 *     "okay,"/"ok," at a sentence's start; "you know", "I mean", "like" as a parenthetical (between
 *     commas, or a comma and the sentence's edge);
 *   - a word said twice in a row ("I I think", "the, the"): once.
 *
 * Each removal is named (`removed`), and the report's `shortening` says what was left out. Rules
 * exist for English sources (the contract's source of the measured recordings); other source
 * languages get none, and the record says so.
 */

export interface Condensed {
  text: string;
  /** What was left out, in order (e.g. "you know", "well", "I (repeated)"). */
  removed: string[];
}

/** The source languages with condensing rules (primary subtag). */
export const CONDENSE_LANGUAGES: readonly string[] = ['en'];

const HESITATIONS = ['um', 'umm', 'uh', 'uhh', 'uhm', 'er', 'erm', 'hmm', 'mm', 'mhm'];
/** At a sentence's start, followed by a comma. */
const OPENERS = ['oh', 'ah', 'well', 'so', 'okay', 'ok'];
/** Parentheticals between commas (or a comma and the sentence's edge). */
const PARENTHETICALS = ['you know', 'I mean', 'like'];

/** Marks where a sentence's first words were left out: the next letter is capitalized. */
const CAP = '\u0001';
const esc = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `text` condensed by the rules of `locale`'s language; `undefined` when that language has none. */
export function condenseLine(text: string, locale: string): Condensed | undefined {
  const lang = locale.toLowerCase().split(/[-_]/)[0]!;
  if (!CONDENSE_LANGUAGES.includes(lang)) return undefined;
  const removed: string[] = [];
  let t = ` ${text.replace(/\s+/g, ' ').trim()} `;
  // hesitations anywhere, with a comma after them
  t = t.replace(new RegExp(`(^|[\\s,])(${HESITATIONS.map(esc).join('|')})(?:[,.]|(?=\\s))`, 'gi'), (_m, pre: string, w: string) => {
    removed.push(w.toLowerCase());
    return pre;
  });
  // at a sentence's start (the line's, or after . ! ?): openers followed by a comma ("Well, so, ..."), and parentheticals ("You know, ...")
  const start = `(^[\\s${CAP}]*|[.!?]\\s+${CAP}?)`;
  const atStart = [...OPENERS, ...PARENTHETICALS].map((w) => ({ w, re: new RegExp(`${start}${esc(w).replace(/ /g, '\\s+')},\\s*`, 'i') }));
  for (let changed = true; changed; ) {
    changed = false;
    for (const { w, re } of atStart) {
      const m = re.exec(t);
      if (!m) continue;
      removed.push(w);
      t = t.slice(0, m.index) + m[1]!.replaceAll(CAP, '') + CAP + t.slice(m.index + m[0].length);
      changed = true;
    }
  }
  // parentheticals inside a sentence: ", you know," -> ","; ", you know." -> "."
  for (const p of PARENTHETICALS) {
    const w = esc(p).replace(/ /g, '\\s+');
    t = t.replace(new RegExp(`,\\s*${w}\\s*(?=[,.!?;:]|\\s*$)`, 'gi'), () => {
      removed.push(p);
      return '';
    });
  }
  // a word said twice in a row (a space or a comma between): once
  t = t.replace(/(^|[\s,])([\p{L}']+)(?:,?\s+)\2(?=[\s,.!?;:]|$)/giu, (_m, pre: string, w: string) => {
    removed.push(`${w} (repeated)`);
    return `${pre}${w}`;
  });
  // tidy: commas left doubled or at the edges, spaces before punctuation, the first letter's case
  t = t
    .replace(/,\s*,/g, ',')
    .replace(/\s+([,.!?;:])/g, '$1')
    .replace(/^[\s,]+/, '')
    .replace(new RegExp(`${CAP}(\\P{L}*)(\\p{L})`, 'gu'), (_m, pre: string, l: string) => pre + l.toUpperCase())
    .replaceAll(CAP, '')
    .replace(/([.!?])\s*,/g, '$1')
    .replace(/\s+/g, ' ')
    .trim();
  return { text: t, removed };
}
