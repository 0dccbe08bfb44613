import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseGlossary, type Glossary } from '@dub/core';
import { createApertiumTranslator } from './engines/apertium.js';
import { createDeeplTranslator, deeplGlossaryXml, deeplPlainText } from './engines/deepl.js';
import { createLibreTranslateTranslator } from './engines/libretranslate.js';
import { createOpenAiCompatibleTranslator } from './engines/openai-compatible.js';
import { checkGlossaryLine, maskTerms, recheckGlossaryLine, TermMatcher, termsIn, unmaskTerms } from './glossary.js';
import { startFakeTranslationServer, type FakeTranslationServer } from './testing/fake-translation-server.js';

const GLOSSARY: Glossary = [
  { term: 'Vaultline', keep: true },
  { term: 'Studio Spark', keep: true },
  { term: 'dubbing', translation: 'doblaje' },
  { term: 'voice clone', translation: 'clon de voz' },
];

describe('term matching', () => {
  it('finds whole words, case-insensitively unless asked, leftmost then longest', () => {
    const m = new TermMatcher([
      { text: 'voice', caseSensitive: false },
      { text: 'voice clone', caseSensitive: false },
      { text: 'clone army', caseSensitive: false },
      { text: 'API', caseSensitive: true },
    ]);
    const text = 'A Voice Clone army, the voices, an api and an API.';
    const found = m.find(text).map((x) => text.slice(x.start, x.end));
    expect(found).toEqual(['Voice Clone', 'API']);
    expect(m.find('voiceover')).toEqual([]);
  });

  it('matches inside unspaced scripts (Han), not inside Latin words', () => {
    const m = new TermMatcher([{ text: '东京', caseSensitive: false }, { text: 'dub', caseSensitive: false }]);
    expect(m.find('我在东京工作').map((x) => x.index)).toEqual([0]);
    expect(m.find('dubbing dub')).toEqual([{ index: 1, start: 8, end: 11 }]);
  });

  it('stays linear on adversarial input (100 nested terms of one letter, 100 kB texts)', () => {
    const terms = Array.from({ length: 100 }, (_, i) => ({ term: 'a'.repeat(i + 1), translation: 'x' }));
    const g = parseGlossary(terms);
    const text = 'a'.repeat(100_000);
    const t0 = performance.now();
    expect(termsIn([text], g)).toEqual([]); // never a whole word
    const m = maskTerms(`${'a'.repeat(99_999)} a`, g);
    expect(m.slots).toHaveLength(1);
    expect(termsIn(['a '.repeat(50_000)], g)).toEqual([g[0]]);
    expect(performance.now() - t0).toBeLessThan(2_000);
  });
});

describe('placeholder masking', () => {
  it('masks terms with placeholders and puts the translations back, capitalised at a sentence start', () => {
    const m = maskTerms('Dubbing with Vaultline. We love dubbing!', GLOSSARY);
    expect(m.text).toBe('Zxqaa with Zxqab. We love Zxqac!');
    const u = unmaskTerms('Zxqaa con zxqab. Nos encanta el ZXQAC!', m.slots);
    expect(u).toEqual({ text: 'Doblaje con Vaultline. Nos encanta el doblaje!', lost: [] });
    const lost = unmaskTerms('Doblaje con algo.', m.slots);
    expect(lost.lost.map((l) => l.entry.term)).toEqual(['dubbing', 'Vaultline', 'dubbing']);
  });

  it('leaves a text that already looks like a placeholder alone', () => {
    expect(maskTerms('Zxqab and dubbing', GLOSSARY).slots).toEqual([]);
  });

  it('reports per line which terms the translation carries, and re-checks edited text', () => {
    const line = checkGlossaryLine('Vaultline makes dubbing easy.', 'Vaultline hace fácil el doblado.', GLOSSARY, 'apertium');
    expect(line).toEqual([
      { term: 'Vaultline', expected: 'Vaultline', keep: true, applied: true },
      { term: 'dubbing', expected: 'doblaje', keep: false, applied: false, reason: 'the translation does not contain "doblaje" (apertium did not carry it)' },
    ]);
    const again = recheckGlossaryLine(line, 'El doblaje con Vaultlines.');
    expect(again.map((t) => [t.term, t.applied])).toEqual([
      ['Vaultline', false],
      ['dubbing', true],
    ]);
    expect(again[0]!.reason).toContain('edited or shortened');
  });
});

describe('apertium applies the glossary (real en -> es)', () => {
  it('keeps brands and writes the fixed translation, where apertium alone does neither', async () => {
    const t = createApertiumTranslator();
    const segments = [
      { id: 'a', text: 'Vaultline makes dubbing simple.' },
      { id: 'b', text: 'Open Studio Spark and start the dubbing.' },
      { id: 'c', text: 'We will meet tomorrow at the station.' },
    ];
    const plain = await t.translate({ sourceLocale: 'en-US', targetLocale: 'es-ES', segments });
    expect(plain[0]!.text).not.toContain('doblaje'); // apertium: "Vaultline Hace bautizar sencillo."
    expect(plain[1]!.text).not.toContain('Studio Spark'); // apertium: "Chispa de Estudio abierto ..."
    const out = await t.translate({ sourceLocale: 'en-US', targetLocale: 'es-ES', segments, glossary: GLOSSARY });
    expect(out[0]!.text).toContain('Vaultline');
    expect(out[0]!.text).toContain('doblaje');
    expect(out[1]!.text).toContain('Studio Spark');
    expect(out[1]!.text).toContain('doblaje');
    expect(out[2]!.text).toBe(plain[2]!.text);
    for (const o of out) expect(o.text).not.toMatch(/zxq/i);
    for (const [i, s] of segments.entries()) expect(checkGlossaryLine(s.text, out[i]!.text, GLOSSARY).every((x) => x.applied)).toBe(true);
  });
});

describe('apertium through Spanish (en -> pt-BR: eng-spa then es-pt_BR)', async () => {
  const t = createApertiumTranslator();
  const route = await t.route('en-US', 'pt-BR').catch(() => undefined);
  if (!route || route.length !== 2) {
    it.skip('apertium-es-pt (Debian) is not installed: no en -> pt-BR route through Spanish to test', () => undefined);
    return;
  }
  it('placeholders survive both legs', async () => {
    const out = await t.translate({ sourceLocale: 'en-US', targetLocale: 'pt-BR', segments: [{ id: 'a', text: 'Open Studio Spark and start the dubbing.' }], glossary: [{ term: 'Studio Spark', keep: true }, { term: 'dubbing', translation: 'dublagem' }] });
    expect(out[0]!.text).toContain('Studio Spark');
    expect(out[0]!.text).toContain('dublagem');
  });
});

describe('HTTP engines apply the glossary (local fake server)', () => {
  let server: FakeTranslationServer;
  beforeAll(async () => {
    server = await startFakeTranslationServer();
  });
  afterAll(async () => {
    await server.close();
  });
  const req = { sourceLocale: 'en-US', targetLocale: 'es-ES', segments: [{ id: 'a', text: 'Vaultline makes dubbing simple & fast.' }, { id: 'b', text: 'Hello.' }], glossary: GLOSSARY };

  it('openai-compatible: the batch\'s terms and the rule are in the prompt', async () => {
    server.requests.length = 0;
    const t = createOpenAiCompatibleTranslator({ baseUrl: `${server.url}/v1`, model: 'm' });
    const out = await t.translate(req);
    const body = server.requests[0]!.body as { messages: { content: string }[] };
    expect(body.messages[0]!.content).toContain('Glossary');
    const user = JSON.parse(body.messages[1]!.content) as { glossary: unknown };
    expect(user.glossary).toEqual([
      { term: 'Vaultline', keep: true },
      { term: 'dubbing', translation: 'doblaje' },
    ]);
    expect(out[0]!.text).toContain('Vaultline');
    // no glossary term in the batch: no glossary in the prompt
    server.requests.length = 0;
    await t.translate({ ...req, segments: [{ id: 'b', text: 'Hello.' }] });
    expect(JSON.parse((server.requests[0]!.body as { messages: { content: string }[] }).messages[1]!.content)).not.toHaveProperty('glossary');
  });

  it('deepl: terms as <keep> tags with tag_handling xml; the reply comes back plain', async () => {
    server.requests.length = 0;
    const t = createDeeplTranslator({ apiKey: 'k:fx', baseUrl: server.url });
    const out = await t.translate(req);
    expect(server.requests[0]!.body).toMatchObject({
      text: ['<keep>Vaultline</keep> makes <keep>doblaje</keep> simple &amp; fast.', 'Hello.'],
      tag_handling: 'xml',
      ignore_tags: ['keep'],
    });
    expect(out[0]!.text).toBe('[es] Vaultline makes doblaje simple & fast.');
    expect(deeplGlossaryXml('a <b> dubbing', GLOSSARY)).toBe('a &lt;b&gt; <keep>doblaje</keep>');
    expect(deeplPlainText('El <keep>doblaje</keep> &amp; <keep >x</keep>')).toBe('El doblaje & x');
  });

  it('libretranslate: terms go masked and come back as given', async () => {
    server.requests.length = 0;
    const t = createLibreTranslateTranslator({ baseUrl: server.url });
    const out = await t.translate(req);
    expect((server.requests.find((r) => r.path === '/translate')!.body as { q: string[] }).q).toEqual(['Zxqaa makes Zxqab simple & fast.', 'Hello.']);
    expect(out.map((o) => o.text)).toEqual(['[es] Vaultline makes doblaje simple & fast.', '[es] Hello.']);
  });
});
