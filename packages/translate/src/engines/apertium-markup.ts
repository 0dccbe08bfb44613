/**
 * How a batch travels through one apertium call. Each segment becomes `<p data-seg="N">text</p>`
 * and apertium runs with its html deformatter (`-f html`), which translates the text of each
 * element and leaves the tags and their attributes byte for byte (checked in the tests), so the
 * translations are cut back into segments by their markers, never by guessing sentence ends.
 *
 * Unknown-word marks: apertium prefixes a word it could not analyse with `*`, one it could not
 * generate with `#` and one its transfer rules did not find with `@`. Dubbed speech must not
 * read those signs aloud, so `stripUnknownMarks` removes a `*`, `#` or `@` that starts a word
 * (the untranslated word itself stays, as apertium leaves it in the source language). A literal
 * `#tag` or `@name` in the source text loses its sign too.
 */

const ENTITY: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function decodeHtml(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]+|#\d+|[a-zA-Z]+);/g, (whole, body: string) => {
    if (body[0] === '#') {
      const cp = body[1] === 'x' || body[1] === 'X' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
      return Number.isFinite(cp) && cp > 0 && cp <= 0x10ffff ? String.fromCodePoint(cp) : whole;
    }
    return ENTITY[body] ?? whole;
  });
}

/** The apertium input for segment texts (one <p> per segment, numbered by position). */
export function encodeBatch(texts: readonly string[]): string {
  return texts.map((t, i) => `<p data-seg="${i}">${escapeHtml(t)}</p>`).join('\n') + '\n';
}

/** The translations by position, or undefined when a marker did not survive exactly once. */
export function decodeBatch(output: string, count: number): string[] | undefined {
  const out: (string | undefined)[] = new Array(count).fill(undefined);
  const re = /<p data-seg="(\d+)">([\s\S]*?)<\/p>/g;
  let found = 0;
  for (let m = re.exec(output); m; m = re.exec(output)) {
    const i = Number(m[1]);
    if (i >= count || out[i] !== undefined) return undefined;
    out[i] = decodeHtml(m[2]!).replace(/\s+/g, ' ').trim();
    found++;
  }
  return found === count ? (out as string[]) : undefined;
}

/**
 * Remove apertium's `*`, `#` and `@` marks at the start of words, and a `#` between a word and the
 * punctuation after it (apertium-hbs-eng's English -> Croatian writes "#zemlja#." inside a
 * segment: "C#." loses its sign too).
 */
export function stripUnknownMarks(text: string): string {
  return text.replace(/(?<![\p{L}\p{N}])[*#@]+(?=[\p{L}\p{N}])/gu, '').replace(/(?<=[\p{L}\p{N}])#+(?=[\p{P}]|\s|$)/gu, '');
}
