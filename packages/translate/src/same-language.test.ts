import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadTranslateConfig } from './config.js';
import { isSameLanguage, passThroughReason } from './same-language.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-same-'));
fs.mkdirSync(path.join(dir, 'modes'));
for (const m of ['eng-spa', 'spa-eng_US']) fs.writeFileSync(path.join(dir, 'modes', `${m}.mode`), '');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const config = { ...loadTranslateConfig({}), apertium: { bin: 'apertium', dataDir: dir, pivot: 'spa' } };

describe('same-language pairs', () => {
  it('one language is its ISO 639 code, whatever the region', () => {
    expect(isSameLanguage('en-US', 'en-US')).toBe(true);
    expect(isSameLanguage('es-ES', 'es-MX')).toBe(true);
    expect(isSameLanguage('pt-BR', 'pt-PT')).toBe(true);
    expect(isSameLanguage('en-US', 'es-ES')).toBe(false);
    // Cantonese and Mandarin are two languages
    expect(isSameLanguage('yue-CN', 'zh-CN')).toBe(false);
    expect(isSameLanguage('xx-XX', 'xx-XX')).toBe(false);
  });

  it('the same locale passes through untranslated; another region only where the engine has no direction between them', async () => {
    expect(await passThroughReason(config, 'en-US', 'en-US')).toBe('en-US -> en-US is one language: the transcript is the script (no translation)');
    expect(await passThroughReason(config, 'es-ES', 'es-MX')).toMatch(/^es-ES and es-MX are one language and apertium has no es-ES -> es-MX direction: the transcript is the script, not adapted to es-MX$/);
    expect(await passThroughReason(config, 'en-US', 'es-ES')).toBeUndefined();
  });
});
