/**
 * The Debian apertium pairs (issue 23 item 2): the locale -> apertium code mapping finds the
 * modes Debian 12's packages install (hr is `hbs`, ms `zlm`, nb `nob`), directly or through
 * Spanish; the package table names what a pair needs; and real apertium translates one sentence
 * of each newly covered pair where its package is installed (skipped, naming the package, where not).
 */
import { execFileSync } from 'node:child_process';
import { SOURCE_LOCALES, TARGET_LOCALES } from '@dub/core';
import { describe, expect, it } from 'vitest';
import { createApertiumTranslator } from './apertium.js';
import { stripUnknownMarks } from './apertium-markup.js';
import { findRoute, parseModeList } from './apertium-modes.js';
import { APERTIUM_PACKAGES, apertiumPackagesFor, packageOfMode } from './apertium-packages.js';

/** `apertium -l` on Debian 12 with apertium-eng-spa and every package of APERTIUM_PACKAGES plus apertium-nno-nob installed (2026-11-26). */
const DEBIAN12_LIST = `  Cyrl-Latn
  dan-nno
  dan-nob
  dan-swe
  eco-es-fr
  eco-fr-es
  eng-hbs
  eng-hbs_BS
  eng-hbs_HR
  eng-hbs_SR
  eng-spa
  es-fr
  es-pt
  es-pt_BR
  fr-es
  hbs-eng
  hin-urd
  ind-zlm
  ita-spa
  nno-dan
  nno-nno_e
  nno-nob
  nno-swe
  nno_e-nno
  nob-dan
  nob-nno
  nob-nno_e-syndis
  nob-nno_e
  nob-swe
  pt-es
  ro-es
  rus-ukr
  spa-eng
  spa-eng_US
  spa-ita
  swe-dan
  swe-nno
  swe-nob
  ukr-rus
  urd-hin
  zlm-ind
`;

const modes = parseModeList(DEBIAN12_LIST);
const route = (s: string, t: string, m = modes) => findRoute(m, s, t)?.map((x) => x.name);

describe('apertium modes from the real Debian 12 list', () => {
  it('parses the translation modes and skips the others (Cyrl-Latn, eco-es-fr, nob-nno_e-syndis)', () => {
    const names = modes.map((m) => m.name);
    expect(names).toHaveLength(37);
    for (const skipped of ['Cyrl-Latn', 'eco-es-fr', 'eco-fr-es', 'nob-nno_e-syndis']) expect(names).not.toContain(skipped);
    expect(names).toContain('eng-hbs_HR');
  });

  it('every mode of the package table is in the real list, and every listed contract-relevant mode has its package', () => {
    const names = new Set(modes.map((m) => m.name));
    for (const p of APERTIUM_PACKAGES) for (const m of p.modes) expect(names.has(m), `${p.package}: ${m}`).toBe(true);
    for (const m of ['eng-spa', 'es-pt_BR', 'ro-es', 'eng-hbs_HR', 'zlm-ind', 'nob-swe', 'urd-hin']) expect(packageOfMode(m)).toBeDefined();
  });

  it('finds the newly covered pairs by their apertium codes (hr: hbs, ms: zlm, nb: nob, id: ind)', () => {
    expect(route('hr-HR', 'en-US')).toEqual(['hbs-eng']);
    expect(route('en-US', 'hr-HR')).toEqual(['eng-hbs_HR']);
    expect(route('id-ID', 'ms-MY')).toEqual(['ind-zlm']);
    expect(route('ms-MY', 'id-ID')).toEqual(['zlm-ind']);
    expect(route('da-DK', 'nb-NO')).toEqual(['dan-nob']);
    expect(route('nb-NO', 'sv-SE')).toEqual(['nob-swe']);
    expect(route('sv-SE', 'da-DK')).toEqual(['swe-dan']);
    expect(route('ru-RU', 'uk-UA')).toEqual(['rus-ukr']);
    expect(route('uk-UA', 'ru-RU')).toEqual(['ukr-rus']);
    expect(route('ur-IN', 'hi-IN')).toEqual(['urd-hin']);
  });

  it('routes the European pairs directly or through Spanish, with the target region variant', () => {
    expect(route('en-US', 'pt-BR')).toEqual(['eng-spa', 'es-pt_BR']);
    expect(route('en-US', 'pt-PT')).toEqual(['eng-spa', 'es-pt']);
    expect(route('fr-FR', 'it-IT')).toEqual(['fr-es', 'spa-ita']);
    expect(route('it-IT', 'fr-FR')).toEqual(['ita-spa', 'es-fr']);
    expect(route('ro-RO', 'en-US')).toEqual(['ro-es', 'spa-eng_US']);
    expect(route('ro-RO', 'pt-BR')).toEqual(['ro-es', 'es-pt_BR']);
    expect(route('pt-PT', 'es-MX')).toEqual(['pt-es']);
    expect(route('es-ES', 'it-IT')).toEqual(['spa-ita']);
  });

  it('refuses what no installed mode connects', () => {
    expect(route('es-ES', 'ro-RO')).toBeUndefined(); // apertium-es-ro installs ro -> es only
    expect(route('hr-HR', 'es-ES')).toBeUndefined(); // hbs connects to English only, the pivot is Spanish
    expect(route('da-DK', 'en-US')).toBeUndefined();
    expect(route('en-US', 'de-DE')).toBeUndefined();
    expect(route('nb-NO', 'nb-NO')).toBeUndefined();
    // Nynorsk is not nb-NO: never dan-nno for it
    expect(route('da-DK', 'nb-NO', parseModeList('dan-nno\n'))).toBeUndefined();
  });

  it('counts the contract pairs apertium translates with every package installed', () => {
    const served = SOURCE_LOCALES.flatMap((s) => TARGET_LOCALES.filter((t) => t !== s && route(s, t)).map((t) => `${s}>${t}`));
    // en, es-ES, es-MX, pt-BR, pt-PT, fr, it among themselves, less the same-language pairs (es-ES<->es-MX, pt-BR<->pt-PT: pass-through), 38;
    // ro -> those 7, 7; hr<->en 2; da, nb, sv among themselves 6; id<->ms 2; ru<->uk 2; ur -> hi 1
    expect(served).toHaveLength(38 + 7 + 2 + 6 + 2 + 2 + 1);
  });
});

describe('the Debian package a pair needs', () => {
  const engSpa = parseModeList('eng-spa\nspa-eng\nspa-eng_US\n');

  it('names one package for a direct pair, one more leg through Spanish, and none for what is installed', () => {
    expect(apertiumPackagesFor(engSpa, 'en-US', 'pt-BR')).toEqual({ route: ['eng-spa', 'es-pt_BR'], packages: ['apertium-es-pt'] });
    expect(apertiumPackagesFor(engSpa, 'fr-FR', 'it-IT')).toEqual({ route: ['fr-es', 'spa-ita'], packages: ['apertium-fr-es', 'apertium-spa-ita'] });
    expect(apertiumPackagesFor(engSpa, 'ro-RO', 'en-US')).toEqual({ route: ['ro-es', 'spa-eng_US'], packages: ['apertium-es-ro'] });
    expect(apertiumPackagesFor(engSpa, 'hr-HR', 'en-US')).toEqual({ route: ['hbs-eng'], packages: ['apertium-hbs-eng'] });
    expect(apertiumPackagesFor([], 'ms-MY', 'id-ID')).toEqual({ route: ['zlm-ind'], packages: ['apertium-ind-zlm'] });
    expect(apertiumPackagesFor([], 'en-US', 'it-IT')).toEqual({ route: ['eng-spa', 'spa-ita'], packages: ['apertium-eng-spa', 'apertium-spa-ita'] });
    expect(apertiumPackagesFor(engSpa, 'en-US', 'es-ES')).toEqual({ route: ['eng-spa'], packages: [] });
  });

  it('names nothing where Debian ships no package for the pair', () => {
    expect(apertiumPackagesFor(engSpa, 'en-US', 'de-DE')).toBeUndefined();
    expect(apertiumPackagesFor(engSpa, 'es-ES', 'ro-RO')).toBeUndefined();
    expect(apertiumPackagesFor(modes, 'ja-JP', 'en-US')).toBeUndefined();
  });

  it('the translator says which package to install (a data directory with eng-spa only)', async () => {
    const fs = await import('node:fs');
    const os = await import('node:os');
    const path = await import('node:path');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-apertium-pkg-'));
    try {
      fs.mkdirSync(path.join(dir, 'modes'));
      for (const m of ['eng-spa', 'spa-eng', 'spa-eng_US']) fs.writeFileSync(path.join(dir, 'modes', `${m}.mode`), '');
      // a missing binary: the directory listing is not reached, the package list comes from the table alone
      const none = await createApertiumTranslator({ bin: '/nonexistent/apertium' }).supports('fr-FR', 'it-IT');
      expect(none).toMatchObject({ supported: false, fix: 'apt-get install -y apertium apertium-fr-es apertium-spa-ita (fr-es then spa-ita)' });
      if (!apertiumBin) return;
      const t = createApertiumTranslator({ dataDir: dir });
      const s = await t.supports('en-US', 'pt-BR');
      expect(s.supported).toBe(false);
      expect(s.fix).toMatch(/^apt-get install -y apertium-es-pt \(Debian; apertium then runs eng-spa then es-pt_BR, through Spanish, into \/usr\/share\/apertium: unset DUB_TRANSLATE_APERTIUM_DATA_DIR/);
      expect(s.reason).toContain('installed: eng-spa, spa-eng, spa-eng_US');
      const de = await t.supports('en-US', 'de-DE');
      expect(de.fix).toBeUndefined();
      expect(de.reason).toMatch(/no Debian apertium package serves it \(directly or through Spanish\)/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('unknown-word marks', () => {
  it('a generation mark between a word and its punctuation goes too (eng-hbs_HR: "#zemlja#.")', () => {
    expect(stripUnknownMarks('@I #ljubav #moj #zemlja#.')).toBe('I ljubav moj zemlja.');
    expect(stripUnknownMarks('Hvala very much#. Da#, ne#')).toBe('Hvala very much. Da, ne');
    expect(stripUnknownMarks('e-mail@host 3*4')).toBe('e-mail@host 3*4');
  });
});

describe('the set-up installs the table', () => {
  it('.ci/run and scripts/quickstart.sh install every package of the table, and only those', async () => {
    const fs = await import('node:fs');
    const root = new URL('../../../../', import.meta.url);
    for (const file of ['.ci/run', 'scripts/quickstart.sh']) {
      const text = fs.readFileSync(new URL(file, root), 'utf8');
      const list = /^APERTIUM_PAIRS=\(([^)]*)\)$/m.exec(text)?.[1]?.trim().split(/\s+/);
      expect(list?.sort(), file).toEqual(APERTIUM_PACKAGES.map((p) => p.package).sort());
    }
  });
});

let installed: Set<string> = new Set();
let apertiumBin = false;
try {
  installed = new Set(parseModeList(execFileSync('apertium', ['-l'], { encoding: 'utf8' })).map((m) => m.name));
  apertiumBin = true;
} catch {
  // no apertium here: the real-run tests below are skipped, naming why
}

describe('real apertium on one sentence of newly covered pairs', () => {
  const cases: [string, string, string, RegExp][] = [
    ['hr-HR', 'en-US', 'Djeca se igraju u vrtu.', /garden/i],
    ['ru-RU', 'uk-UA', 'Спасибо большое за помощь.', /допомогу/],
    ['id-ID', 'ms-MY', 'Mobil itu sangat mahal.', /kereta/i],
    ['da-DK', 'nb-NO', 'Tak for hjælpen.', /takk for hjelpen/i],
    ['sv-SE', 'da-DK', 'Barnen leker i trädgården.', /haven/i],
    ['fr-FR', 'it-IT', 'Le chat mange du poisson.', /gatto/i],
    ['ro-RO', 'en-US', 'Copiii se joacă în grădină.', /garden/i],
    ['it-IT', 'fr-FR', 'Il bambino gioca nel giardino.', /jardin/i],
    // weak: most words come back untranslated and marked; no mark may reach the voice
    ['en-US', 'hr-HR', 'I love my country.', /^[^*#@]*$/],
  ];
  for (const [s, t, text, expected] of cases) {
    const need = route(s, t)!;
    const missing = need.filter((m) => !installed.has(m)).map((m) => packageOfMode(m) ?? m);
    const why = !apertiumBin ? 'apertium is not installed' : missing.length ? `not installed: ${missing.join(', ')}` : '';
    it.skipIf(why !== '')(`${s} -> ${t} (${need.join(' then ')})${why ? ` [skipped: ${why}]` : ''}`, async () => {
      const tr = createApertiumTranslator();
      expect((await tr.supports(s, t)).supported).toBe(true);
      const out = await tr.translate({ sourceLocale: s, targetLocale: t, segments: [{ id: '1', text }] });
      expect(out[0]!.text).toMatch(expected);
      expect(out[0]!.text).not.toBe(text);
    });
  }
});
