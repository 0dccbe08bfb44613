/**
 * condense.ts: the source line with its hesitations, fillers, discourse markers and repeated
 * words left out (issue 26 item 4, where the pair's engine can give no shorter line); nothing the
 * meaning needs is removed, and each removal is named.
 */
import { describe, expect, it } from 'vitest';
import { condenseLine } from './condense.js';

describe('condensing a source line', () => {
  it('leaves out hesitations, openers and parentheticals set off by commas, and names them', () => {
    expect(condenseLine("Well, there's not much difference. At least, you know, they all call me a Yankee. So, that's it.", 'en-US')).toEqual({
      text: "There's not much difference. At least, they all call me a Yankee. That's it.",
      removed: ['well', 'so', 'you know'],
    });
    expect(condenseLine('Hello? Hello? Oh, hello. Um, I I mean it.', 'en-GB')).toEqual({ text: 'Hello? Hello? Hello. I mean it.', removed: ['um', 'oh', 'I (repeated)'] });
    expect(condenseLine('You know, it is, like, the the best.', 'en-US')).toEqual({ text: 'It is, the best.', removed: ['you know', 'like', 'the (repeated)'] });
  });

  it('keeps words that carry meaning: no comma, not at a sentence start, or a question repeated with punctuation', () => {
    for (const t of ['So we went home.', 'I like cats.', 'Do you know the way?', 'I mean what I say.', 'And so, my fellow Americans, ask not.', 'Oh my god.', 'Hello? Hello?']) {
      expect(condenseLine(t, 'en-US')).toEqual({ text: t, removed: [] });
    }
  });

  it('has no rules for other source languages', () => {
    expect(condenseLine('Bueno, pues, vale.', 'es-ES')).toBeUndefined();
  });
});
