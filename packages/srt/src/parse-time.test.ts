/**
 * The parser is linear in its input: a seeded fuzz of adversarial SRT documents (long runs of
 * digits, spaces, colons and arrows where the index, the timing line and the cue text go) must
 * parse, or be refused, in time proportional to their size. The bound is relative: each is
 * compared with a normal SRT document of the same size parsed in the same run, so a slow or loaded
 * machine slows both alike.
 */
import { describe, expect, it } from 'vitest';
import { validateSrt } from './parse.js';

/** mulberry32: a small seeded PRNG (the same documents on every run). */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pad = (n: number, w: number) => String(n).padStart(w, '0');
const ts = (ms: number) => `${pad(Math.floor(ms / 3_600_000), 2)}:${pad(Math.floor(ms / 60_000) % 60, 2)}:${pad(Math.floor(ms / 1000) % 60, 2)},${pad(ms % 1000, 3)}`;
const CUE = '1\n00:00:01,000 --> 00:00:02,000\n';

/** A valid SRT document of about `size` bytes: short cues of random words. */
function normalSrt(rand: () => number, size: number): string {
  const words = ['hola', 'mundo', 'the', 'quick', 'brown', 'fox', 'dubbing', 'señor', '12', 'ok'];
  const parts: string[] = [];
  let len = 0;
  for (let i = 1; len < size; i++) {
    const line = Array.from({ length: 3 + Math.floor(rand() * 6) }, () => words[Math.floor(rand() * words.length)]).join(' ');
    const cue = `${i}\n${ts(i * 2000)} --> ${ts(i * 2000 + 1500)}\n${line}\n\n`;
    parts.push(cue);
    len += cue.length;
  }
  return parts.join('');
}

/** A run of random characters of a small alphabet, in runs of random length. */
function soup(rand: () => number, size: number, alphabet: string): string {
  const out: string[] = [];
  let len = 0;
  while (len < size) {
    const c = alphabet[Math.floor(rand() * alphabet.length)]!;
    const run = Math.min(size - len, 1 + Math.floor(rand() * rand() * size));
    out.push(c.repeat(run));
    len += run;
  }
  return out.join('');
}

type Gen = (rand: () => number, size: number) => string;
const ADVERSARIAL: Record<string, Gen> = {
  'digits as the index': (_r, n) => '7'.repeat(n),
  'digits as the timing line': (_r, n) => `1\n${'1'.repeat(n)}`,
  'spaces inside the timing line': (_r, n) => `1\na${' '.repeat(n)}b`,
  'spaces around an arrow in the timing line': (_r, n) => `1\n00:00:01,000${' '.repeat(n / 2)}-->${' '.repeat(n / 2)}00:00:02,000\nx\n`,
  'digits before an arrow in the text': (_r, n) => `${CUE}${'1'.repeat(n)}-->x\n`,
  'spaces before an arrow in the text': (_r, n) => `${CUE}x${' '.repeat(n)}-->\n`,
  'digits after an arrow in the text': (_r, n) => `${CUE}00:00:01,000 -->${'2'.repeat(n)}\n`,
  'colon-digit runs in the text': (_r, n) => `${CUE}${'11:22:'.repeat(n / 6)} --> ${'11:22:'.repeat(n / 6)}\n`,
  'arrows only': (_r, n) => `${CUE}${'-->'.repeat(n / 3)}\n`,
  'many text lines with arrows': (_r, n) => `${CUE}${'1 --> 2\n'.repeat(n / 8)}`,
  'many short invalid timing candidates': (_r, n) => `${CUE}${'0:00:00,000 -> \n'.repeat(n / 16)}`,
  'random soup in the timing line': (r, n) => `1\n${soup(r, n, '0123456789: ,.->\t')}\nx\n`,
  'random soup in the text': (r, n) => `${CUE}${soup(r, n, '0123456789: ,.->\t')}\n`,
  'random soup with line ends': (r, n) => soup(r, n, '0123456789: ,.->\t\r\n'),
};

/** Best of `runs` timings of validateSrt(text), in ms. */
function timeParse(text: string, runs = 3): number {
  let best = Infinity;
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    validateSrt(text);
    best = Math.min(best, performance.now() - t0);
  }
  return best;
}

describe('parseSrt runs in linear time', () => {
  const SIZE = 256 * 1024;
  const rand = prng(0x5eed);
  const baseline = normalSrt(rand, SIZE);
  const adversarial = Object.entries(ADVERSARIAL).map(([name, gen]) => [name, gen(rand, SIZE)] as const);

  it(`parses each adversarial document of ${SIZE / 1024} KB within a small multiple of a normal one of the same size`, () => {
    expect(validateSrt(baseline).ok).toBe(true);
    const base = timeParse(baseline, 5);
    const slow: string[] = [];
    for (const [name, text] of adversarial) {
      const t = timeParse(text, 5);
      // A quadratic scan takes minutes here; a linear one about the normal document's time. The
      // margin absorbs a shared, loaded machine stalling the runs.
      if (t > 10 * base + 50) slow.push(`${name}: ${t.toFixed(1)} ms (normal document: ${base.toFixed(1)} ms)`);
    }
    expect(slow).toEqual([]);
  });

  it('parses or refuses a 1 MB adversarial document well under a second', () => {
    const big = prng(0xb16);
    for (const [name, gen] of Object.entries(ADVERSARIAL)) {
      const text = gen(big, 1024 * 1024);
      // Best of three: a shared, loaded machine can stall one run. A quadratic scan takes minutes.
      const t = timeParse(text, 3);
      expect(t, name).toBeLessThan(500);
    }
  });
});
