/**
 * `auto` (the default engine) per pair: apertium where it has a direct mode, M2M100 where it is
 * installed and apertium has none (or only a route through Spanish), apertium through Spanish
 * otherwise, and a refusal naming every fix. apertium runs for real on a private data directory
 * whose modes/ lists the directions (its translations are not asked for here); M2M100 is the
 * tiny stand-in (scripts/make-tiny-m2m100.py), which copies its source.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { VersionError } from '@dub/core';
import type { AutoTranslator } from './auto.js';
import { loadTranslateConfig, type TranslateConfig } from './config.js';
import { createTranslator, pairHost, TRANSLATE_ENGINES } from './registry.js';
import { pairEngine, translatorForPair } from './select-translator.js';

const FIX = fileURLToPath(new URL('../fixtures/', import.meta.url));
const apertium = fs.existsSync('/usr/bin/apertium') || fs.existsSync('/usr/local/bin/apertium');
const data = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-auto-'));
fs.mkdirSync(path.join(data, 'modes'));
for (const m of ['eng-spa', 'spa-eng', 'fr-es', 'spa-ita']) fs.writeFileSync(path.join(data, 'modes', `${m}.mode`), '');
const config = (m2m100: 'tiny' | 'absent'): TranslateConfig => {
  const c = loadTranslateConfig({});
  return { ...c, apertium: { ...c.apertium, dataDir: data }, m2m100: { ...c.m2m100, model: m2m100 === 'tiny' ? 'm2m100-tiny-test' : 'm2m100-absent-test', modelsDir: FIX, beams: 2 } };
};
const skip = apertium ? '' : ' [skipped: apertium is not installed]';

describe('auto: the offline engine of each pair', () => {
  it.skipIf(!apertium)(`apertium where it has a direct mode, even with M2M100 installed${skip}`, async () => {
    const p = await pairEngine(config('tiny'), 'en-US', 'es-ES');
    expect([p.engine, p.auto, p.support.supported]).toEqual(['apertium', true, true]);
    expect(p.reason).toBe('auto: apertium has a direct mode (eng-spa)');
  });

  it('M2M100 where apertium has no mode: translatorForPair returns it, so the record names it', async () => {
    const t = await translatorForPair(config('tiny'), 'en-US', 'de-DE');
    expect(t.engine).toBe('m2m100');
    expect(await t.translate({ sourceLocale: 'en-US', targetLocale: 'de-DE', segments: [{ id: 'a', text: 'Open the studio.' }] })).toEqual([{ id: 'a', text: 'Open the studio.' }]);
    const auto = (await createTranslator('auto', config('tiny'))) as AutoTranslator;
    expect(await auto.engineFor('fil-PH', 'ja-JP')).toBe('m2m100');
    expect(await auto.supports('en-US', 'de-DE')).toEqual({ supported: true });
  });

  it.skipIf(!apertium)(`M2M100 over apertium's route through Spanish; that route where M2M100 is not installed${skip}`, async () => {
    const withModel = await pairEngine(config('tiny'), 'fr-FR', 'it-IT');
    expect(withModel.engine).toBe('m2m100');
    expect(withModel.reason).toMatch(/no direct mode for fr-FR -> it-IT \(only through Spanish\); the offline model M2M100/);
    const without = await pairEngine(config('absent'), 'fr-FR', 'it-IT');
    expect(without.engine).toBe('apertium');
    expect(without.support.supported).toBe(true);
    expect(without.reason).toMatch(/^auto: apertium through Spanish \(fr-es then spa-ita\); M2M100 does not serve it here: the M2M100 model \(m2m100-absent-test\) is not installed/);
  });

  it('refuses a pair no offline engine serves, naming both engines and every fix', async () => {
    const err = await translatorForPair(config('absent'), 'en-US', 'de-DE').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VersionError);
    expect((err as Error).message).toMatch(/engine "auto" \(from DUB_TRANSLATE_ENGINE\) cannot translate it: .*M2M100: the M2M100 model \(m2m100-absent-test\) is not installed here/);
    expect((err as Error).message).toContain('npx dub models fetch m2m100-absent-test');
    // Cantonese: neither engine, and no fetch would help
    const yue = await pairEngine(config('tiny'), 'en-US', 'yue-CN');
    expect(yue.support.supported).toBe(false);
    expect(yue.support.reason).toMatch(/M2M100: M2M100 has no Cantonese/);
  });
});

describe('the registry answers per pair, as auto does', () => {
  it.skipIf(!apertium)(`resolve('auto') ranks apertium direct, M2M100, apertium through Spanish${skip}`, async () => {
    const r = (source: string, target: string, m: 'tiny' | 'absent') => TRANSLATE_ENGINES.resolve('auto', target, pairHost(source, config(m)));
    expect((await r('en-US', 'es-ES', 'tiny')).reason).toBe('auto: apertium has a direct mode (eng-spa)');
    expect((await r('fr-FR', 'it-IT', 'tiny')).id).toBe('m2m100');
    const spanish = await r('fr-FR', 'it-IT', 'absent');
    expect([spanish.id, spanish.reason]).toEqual(['apertium', 'auto: apertium through Spanish (fr-es then spa-ita)']);
  });

  it('M2M100 by its language table and files; an explicit engine that cannot translate the pair throws', async () => {
    expect((await TRANSLATE_ENGINES.resolve('auto', 'de-DE', pairHost('en-US', config('tiny')))).id).toBe('m2m100');
    const yue = await TRANSLATE_ENGINES.get('m2m100').supports('yue-CN', pairHost('en-US', config('tiny')));
    expect(yue).toMatchObject({ ok: false, reason: expect.stringMatching(/Cantonese/) });
    await expect(TRANSLATE_ENGINES.resolve('m2m100', 'de-DE', pairHost('en-US', config('absent')))).rejects.toThrow(/m2m100-absent-test\) is not installed/);
    // a service by its configuration: DeepL without a key
    expect(await TRANSLATE_ENGINES.get('deepl').supports('de-DE', pairHost('en-US', config('tiny')))).toEqual({ ok: false, reason: 'deepl needs DUB_TRANSLATE_DEEPL_API_KEY' });
  });
});
