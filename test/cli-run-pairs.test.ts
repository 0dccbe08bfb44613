/**
 * `dub run` checks the pair before it starts (issue 23 item 3): a pair a stage here cannot run is
 * exit 2 with one stderr line naming the stage, what is missing and the fix, and nothing written.
 * Translation is asked of a private apertium data directory (eng-spa, spa-eng_US) so the answer
 * does not depend on what this host installed.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DUB } from './e2e-helpers.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-run-pairs-'));
fs.mkdirSync(path.join(dir, 'apertium', 'modes'), { recursive: true });
for (const m of ['eng-spa', 'spa-eng_US']) fs.writeFileSync(path.join(dir, 'apertium', 'modes', `${m}.mode`), '');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const apertium = ['/usr/bin/apertium', '/usr/local/bin/apertium'].some((f) => fs.existsSync(f));

function dub(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [DUB, ...args], { encoding: 'utf8', env: { ...process.env, DUB_LOG_LEVEL: 'warn', DUB_TRANSLATE_APERTIUM_DATA_DIR: path.join(dir, 'apertium'), ...env }, timeout: 120_000 });
}

describe('dub run: a pair the engines here do not serve is exit 2 before any work', () => {
  const out = path.join(dir, 'out');
  const srt = path.join(dir, 'source.srt');
  fs.writeFileSync(srt, '1\n00:00:01,000 --> 00:00:02,000\nHello.\n');
  const cases: [string, string[], Record<string, string>, RegExp][] = [
    ['no ASR engine transcribes the source', ['--from', 'de-DE', '--to', 'de-DE'], { DUB_ASR_ENGINE: 'pocketsphinx' }, /^dub run: --from: de-DE is not supported for its role \(source\) here: speech recognition: .*pocketsphinx.*; to fix: DUB_ASR_ENGINE=auto/],
    ['the voice named does not speak the target', ['--from', 'en-US', '--to', 'en-US', '--source-srt', srt, '--tts-engine', 'piper'], {}, /^dub run: --to: en-US -> en-US is not supported for its role \(target\) here: speech synthesis: .*piper/],
  ];
  // (M2M100 under an id that is nowhere, so the answer does not depend on whether this host fetched the model)
  if (apertium) cases.push(['no translation engine for the pair (apertium here, no M2M100)', ['--from', 'en-US', '--to', 'es-ES,de-DE', '--source-srt', srt], { DUB_TRANSLATE_M2M100_MODEL: 'm2m100-absent-test' }, /^dub run: --to: en-US -> de-DE is not supported for its role \(target\) here: translation: auto \(from DUB_TRANSLATE_ENGINE\) cannot translate en-US -> de-DE: .*installed: eng-spa, spa-eng_US.*; to fix: npx dub models fetch m2m100-absent-test .*; or set DUB_TRANSLATE_ENGINE_EN_DE /]);
  it.each(cases)('%s', (_name, args, env, msg) => {
    const r = dub(['run', DUB, ...args, '--out', out], env);
    expect(r.status).toBe(2);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(msg);
    expect(fs.existsSync(out)).toBe(false);
  });

  it('the locale errors list the contract\'s locales (there is no GET /v1/languages)', () => {
    const r = dub(['run', DUB, '--from', 'xx-XX', '--to', 'es-ES', '--out', out]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^dub run: --from xx-XX is not a supported source locale \(the contract's source locales: ar-AE, .*vi-VN\)\n$/);
    expect(r.stderr).not.toMatch(/v1\/languages/);
    const t = dub(['run', DUB, '--from', 'en-US', '--to', 'he-IL', '--out', out]);
    expect(t.stderr).toMatch(/^dub run: --to he-IL is not a supported target locale \(the contract's target locales: .*th-TH.*\)\n$/);
  });
});
