/**
 * The coverage table of `dub doctor --pairs` from the real PairChecker: apertium is asked of a
 * private data directory holding only eng-spa's modes (what quickstart installs), so the verdicts
 * do not depend on the Debian pair packages this host has.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { engineChoiceFromEnv, PairChecker } from '@dub/pipeline';
import { fileURLToPath } from 'node:url';
import { languageOf } from '@dub/core';
import { loadTranslateConfig, m2m100Code } from '@dub/translate';
import { afterAll, describe, expect, it } from 'vitest';
import { contractPairs, formatPairTable, groupReason, packagesOfFix, pairTable } from './pair-table.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-pair-table-'));
fs.mkdirSync(path.join(dir, 'modes'));
for (const m of ['eng-spa', 'spa-eng', 'spa-eng_US']) fs.writeFileSync(path.join(dir, 'modes', `${m}.mode`), '');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const apertium = ['/usr/bin/apertium', '/usr/local/bin/apertium'].some((f) => fs.existsSync(f));

describe('dub doctor --pairs: the table', () => {
  it('the contract has 1,370 ordered pairs of a source and a different target locale', () => {
    expect(contractPairs()).toHaveLength(1370);
    expect(contractPairs('en-US')).toHaveLength(36);
    expect(contractPairs(undefined, 'es-ES')).toHaveLength(37);
    expect(contractPairs('en-US', 'es-ES')).toEqual([['en-US', 'es-ES']]);
  });

  it('groups refusals by their reason without the locales, and reads the packages off the fix', () => {
    expect(groupReason('apertium has no en-US -> pt-BR direction (installed: eng-spa, spa-eng); Debian\'s apertium-es-pt would serve it', 'en-US', 'pt-BR'))
      .toBe('apertium has no SOURCE -> TARGET direction; a Debian apertium package would serve it');
    expect(groupReason('no installed engine speaks fil-PH', 'en-US', 'fil-PH')).toBe('no installed engine speaks TARGET');
    expect(packagesOfFix('apt-get install -y apertium-fr-es apertium-spa-ita (Debian; apertium then runs fr-es then spa-ita); or set X')).toEqual(['apertium-fr-es', 'apertium-spa-ita']);
    expect(packagesOfFix('set DUB_TRANSLATE_ENGINE_EN_DE')).toEqual([]);
  });

  it.skipIf(!apertium)(`from the registries: eng-spa alone serves 8 pairs, the Debian packages 54 more${apertium ? '' : ' [skipped: apertium is not installed]'}`, async () => {
    // M2M100 under an id that is nowhere: the table does not depend on whether this host fetched the model
    const base = loadTranslateConfig({});
    const translate = { ...base, apertium: { dataDir: dir }, m2m100: { ...base.m2m100, model: 'm2m100-absent-test' } };
    const t0 = Date.now();
    const table = await pairTable(new PairChecker({ translate, choice: engineChoiceFromEnv({ DUB_TTS_ENGINE: 'espeak-ng' }) }));
    expect(Date.now() - t0).toBeLessThan(20_000); // nothing is loaded
    expect(table.total).toBe(1370);
    expect(table.served + table.refused).toBe(1370);
    const served = table.rows.filter((r) => r.served).map((r) => `${r.source}>${r.target}:${r.translation}`).sort();
    expect(served).toEqual(['en-US>es-ES:apertium', 'en-US>es-MX:apertium', 'es-ES>en-US:apertium', 'es-ES>es-MX:none', 'es-MX>en-US:apertium', 'es-MX>es-ES:none', 'pt-BR>pt-PT:none', 'pt-PT>pt-BR:none']);
    for (const r of table.rows.filter((x) => x.served)) expect(r).toMatchObject({ asr: 'whisper', tts: 'espeak-ng' });
    // every refusal is translation's (Whisper and espeak-ng cover the rest of these pairs), and each names why
    // (Cantonese apart: M2M100 has no Cantonese, so no model would serve those 73 either)
    expect(table.refusals.map((g) => [g.stage, g.count])).toEqual([['translation', 1235], ['translation', 73], ['translation', 54]]);
    expect(table.refusals[1]!.reason).toMatch(/M2M100: M2M100 has no Cantonese/);
    expect(table.refusals[2]!.reason).toMatch(/a Debian apertium package would serve it; M2M100: the M2M100 model \(m2m100-absent-test\) is not installed here$/);
    const byPkg = Object.fromEntries(table.apertiumPackages.map((p) => [p.packages.join(' '), p.count]));
    expect(byPkg).toMatchObject({ 'apertium-es-pt': 12, 'apertium-fr-es': 6, 'apertium-spa-ita': 6, 'apertium-es-ro': 3, 'apertium-hbs-eng': 2, 'apertium-es-pt apertium-fr-es': 4, 'apertium-urd-hin': 1 });
    expect(table.apertiumPackages.reduce((n, p) => n + p.count, 0)).toBe(54);
    // the refusal `dub run` and the API give: the package first, then the engine variable
    expect(table.rows.find((r) => r.source === 'fr-FR' && r.target === 'it-IT')!.fix).toMatch(/^apt-get install -y apertium-fr-es apertium-spa-ita \(Debian; apertium then runs fr-es then spa-ita, through Spanish, .*\); or npx dub models fetch m2m100-absent-test .*; or set DUB_TRANSLATE_ENGINE_FR_IT /);
    const text = formatPairTable(table);
    expect(text).toMatch(/^summary: 8 of 1370 pairs served here, 1362 refused \(1362 at translation\)$/m);
    expect(text).toMatch(/^\s+54 {2}all of them: apt-get install -y apertium-dan-nor apertium-es-pt apertium-es-ro apertium-fr-es apertium-hbs-eng apertium-ind-zlm apertium-rus-ukr apertium-spa-ita apertium-swe-dan apertium-swe-nor apertium-urd-hin$/m);
    expect(text).toMatch(/^ {2}en-US {3}es-ES {3}whisper {13}apertium {29}espeak-ng$/m);
  }, 60_000);

  it.skipIf(!apertium)(`with the M2M100 model installed (the stand-in's files), auto serves every pair of two M2M100 languages${apertium ? '' : ' [skipped: apertium is not installed]'}`, async () => {
    const base = loadTranslateConfig({});
    const fixtures = fileURLToPath(new URL('../../translate/fixtures/', import.meta.url));
    const translate = { ...base, apertium: { dataDir: dir }, m2m100: { ...base.m2m100, model: 'm2m100-tiny-test', modelsDir: fixtures } };
    const table = await pairTable(new PairChecker({ translate, choice: engineChoiceFromEnv({ DUB_TTS_ENGINE: 'espeak-ng' }) }));
    // expected, from the language table alone: one language -> none; en <-> es -> apertium (direct); else m2m100 unless Cantonese
    const want = new Map<string, string>();
    for (const [s, t] of contractPairs()) {
      if (languageOf(s) === languageOf(t)) want.set(`${s}>${t}`, 'none');
      else if (['en', 'es'].includes(languageOf(s)) && ['en', 'es'].includes(languageOf(t))) want.set(`${s}>${t}`, 'apertium');
      else if (m2m100Code(s) && m2m100Code(t)) want.set(`${s}>${t}`, 'm2m100');
    }
    expect(want.size).toBe(1297);
    // served: with the engine expected; refused: at translation exactly where none is expected (fil-PH targets: no voice here)
    for (const r of table.rows) {
      const k = `${r.source}>${r.target}`;
      if (r.served) expect(r.translation, k).toBe(want.get(k));
      else if (r.stage === 'translation') expect(want.has(k), k).toBe(false);
      else expect(r.stage, k).toBe('speech synthesis');
    }
    const byStage = Object.fromEntries(table.refusals.map((g) => [g.stage, g.count]));
    expect(byStage).toEqual({ translation: 73, 'speech synthesis': 36 });
    expect(table.served).toBe(1297 - 36);
    expect(table.refusals.find((g) => g.stage === 'translation')!.reason).toMatch(/M2M100 has no Cantonese/);
    expect(formatPairTable(table)).toMatch(/^ {2}en-US {3}de-DE {3}whisper {13}m2m100 {31}espeak-ng$/m);
  }, 60_000);
});
