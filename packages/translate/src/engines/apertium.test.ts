import { describe, expect, it } from 'vitest';
import { translatorConformance } from '../testing/conformance.js';
import { createApertiumTranslator } from './apertium.js';
import { decodeBatch, encodeBatch, stripUnknownMarks } from './apertium-markup.js';
import { findRoute, parseModeList } from './apertium-modes.js';

const EN_LINES = [
  'Hello, how are you today?',
  'I love my country.',
  'The children are playing in the garden.',
  'We will meet tomorrow at the station.',
  'Thank you very much for your help.',
];
const SPANISH_WORDS = /(^|[^\p{L}])(el|la|los|las|de|del|mi|en|y|que|hola|mañana|gracias|muchas|niños|país|hoy|para|por|un|una|es|está|están)([^\p{L}]|$)/iu;

translatorConformance('apertium en-US -> es-ES', {
  create: ({ maxBatchSegments }) => ({ translator: createApertiumTranslator({ maxBatchSegments }), sourceLocale: 'en-US', targetLocale: 'es-ES' }),
  looksTranslated: (src, out) => out !== src && SPANISH_WORDS.test(out),
  lines: EN_LINES,
});

describe('apertium engine', () => {
  it('translates Spanish to English and prefers the regional mode of the target (spa-eng_US for en-US)', async () => {
    const t = createApertiumTranslator();
    const route = await t.route('es-ES', 'en-US');
    expect(route?.map((m) => m.name)).toEqual(['spa-eng_US']);
    const out = await t.translate({ sourceLocale: 'es-ES', targetLocale: 'en-US', segments: [{ id: '1', text: 'Los niños juegan en el jardín.' }] });
    expect(out[0]!.text.toLowerCase()).toContain('garden');
  });

  it('strips unknown-word marks from real output and keeps apostrophes inside segments', async () => {
    const t = createApertiumTranslator();
    const out = await t.translate({
      sourceLocale: 'en-US',
      targetLocale: 'es-ES',
      segments: [
        { id: 'a', text: 'The weather is splendiferous and warmish.' },
        { id: 'b', text: "It's five o'clock. Don't go." },
        { id: 'c', text: 'We will meet tomorrow at the station.' },
      ],
    });
    expect(out.map((o) => o.id)).toEqual(['a', 'b', 'c']);
    expect(out[0]!.text).toContain('splendiferous');
    for (const o of out) expect(o.text).not.toMatch(/(^|\s)[*#@]\p{L}/u);
    expect(out[2]!.text.toLowerCase()).toContain('mañana');
  });

  it('segment markers survive apertium untouched, one per segment', async () => {
    const t = createApertiumTranslator();
    const lines = Array.from({ length: 120 }, (_, i) => `${EN_LINES[i % EN_LINES.length]} Number ${i}.`);
    const out = await t.translate({ sourceLocale: 'en-US', targetLocale: 'es-ES', segments: lines.map((text, i) => ({ id: `s${i}`, text })) });
    expect(out).toHaveLength(120);
    for (const [i, o] of out.entries()) expect(o.text).toContain(String(i));
  });

  it('reports an uninstalled pair with the installed list', async () => {
    const t = createApertiumTranslator();
    const s = await t.supports('en-US', 'de-DE');
    expect(s.supported).toBe(false);
    expect(s.reason).toContain('eng-spa');
  });

  it('reports a missing binary as unsupported with the install hint', async () => {
    const t = createApertiumTranslator({ bin: '/nonexistent/apertium' });
    const s = await t.supports('en-US', 'es-ES');
    expect(s.supported).toBe(false);
    expect(s.reason).toMatch(/apt-get install -y apertium apertium-eng-spa/);
  });
});

describe('apertium modes', () => {
  const modes = parseModeList('  eng-spa\n  spa-eng\n  spa-eng_US\n  cat-spa\n  spa-cat\n  spa-cat_valencia\n  por-spa\n  eng-spa-biltrans\n');

  it('parses mode names and skips debug modes', () => {
    expect(modes.map((m) => m.name)).toEqual(['eng-spa', 'spa-eng', 'spa-eng_US', 'cat-spa', 'spa-cat', 'spa-cat_valencia', 'por-spa']);
  });

  it('routes a pair without a direct mode through Spanish', () => {
    expect(findRoute(modes, 'en-US', 'es-MX')?.map((m) => m.name)).toEqual(['eng-spa']);
    expect(findRoute(modes, 'pt-BR', 'en-US')?.map((m) => m.name)).toEqual(['por-spa', 'spa-eng_US']);
    expect(findRoute(modes, 'en-US', 'pt-PT')).toBeUndefined();
    expect(findRoute(modes, 'de-DE', 'en-US')).toBeUndefined();
  });

  it('never routes one language through the pivot and back (en-US -> en-US went eng-spa, spa-eng_US)', () => {
    expect(findRoute(modes, 'en-US', 'en-US')).toBeUndefined();
    expect(findRoute(modes, 'es-ES', 'es-MX')).toBeUndefined();
    expect(findRoute(modes, 'pt-BR', 'pt-PT')).toBeUndefined();
    // a direct mode between two variants of one language is taken
    expect(findRoute(parseModeList('por-por_PT\n'), 'pt-BR', 'pt-PT')?.map((m) => m.name)).toEqual(['por-por_PT']);
  });

  it('prefers the plain mode when no variant matches the region', () => {
    expect(findRoute(modes, 'es-ES', 'en-US')?.map((m) => m.name)).toEqual(['spa-eng_US']);
    const gb = parseModeList('spa-eng\nspa-eng_US\n');
    expect(findRoute(gb, 'es-ES', 'fil-PH')).toBeUndefined();
  });
});

describe('apertium markup', () => {
  it('encodes and decodes a batch by markers', () => {
    const enc = encodeBatch(['a & b', '<x>']);
    expect(enc).toBe('<p data-seg="0">a &amp; b</p>\n<p data-seg="1">&lt;x&gt;</p>\n');
    expect(decodeBatch('<p data-seg="1"> y </p><p data-seg="0">&amp;&#233;&#xE9;</p>', 2)).toEqual(['&éé', 'y']);
    expect(decodeBatch('<p data-seg="0">a</p>', 2)).toBeUndefined();
    expect(decodeBatch('<p data-seg="0">a</p><p data-seg="0">b</p>', 2)).toBeUndefined();
  });

  it('strips *, # and @ at word starts only', () => {
    expect(stripUnknownMarks('El *xyzzy está en la #canal con @usuario, (*foo) 3*4 e-mail@host')).toBe('El xyzzy está en la canal con usuario, (foo) 3*4 e-mail@host');
  });
});
