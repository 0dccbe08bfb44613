/**
 * `dub run`: dub one video on this machine with the embedded defaults (no server, no NATS):
 * prepare (probe, trim, separation, VAD, ASR, speakers, translation) then generate (synthesis,
 * duration fitting, mixing, mux) for each target language, through the same job handlers and
 * in-process queue that `dub serve` uses. Writes, per target locale, `<out>/<locale>/`:
 * dubbed.mp4, dubbed.m4a, source.srt, target.srt, script.json; and `<out>/transcript.json`.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  blobKeys, createLogger, FsBlobStore, isSourceLocale, isTargetLocale, loadConfig, newId, ValidationError,
  GENERATE_MODES, SRT_PROFILES, type GenerateMode, type Job, type SrtProfileName, type Transcript, type VersionScript, type WorkerEvent,
} from '@dub/core';
import { createJobHandlers, inputsHash } from '@dub/pipeline';
import { formatSubtitles, scriptSubtitles, serializeSrt, transcriptSubtitles, validateSrt } from '@dub/srt';
import { createEmbeddedRuntime } from '@dub/worker';

export const summary = 'dub one video here, end to end (embedded defaults), into an output folder';

const USAGE = `usage: dub run --input FILE --from LOCALE --to LOCALE[,LOCALE...] [options]

  --input FILE          source video (required)
  --from LOCALE         source locale, e.g. en-US (required)
  --to LOCALES          target locales, comma-separated, e.g. es-ES,fr-FR (required)
  --out DIR             output folder (default ./dub-output)
  --mode MODE           no_lips (default) or with_lips
  --speakers N          number of speakers (default: estimated)
  --start S, --end S    trim the source (seconds)
  --source-srt FILE     use this transcript instead of speech recognition
  --voice-over          keep the original audio under the dubbed vocals (needs --voice)
  --voice ID            library voice narrating every speaker (see GET /v1/voices)
  --anonymize X         voice anonymization 0..1 (default 0)
  --srt-profile NAME    regular (default), mobile, global_regular, global_mobile
  --data-dir DIR        working data (default <out>/.work; reused, so a rerun resumes)
`;

function num(v: string | undefined, name: string, opts: { int?: boolean; min?: number; max?: number } = {}): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || (opts.int && !Number.isInteger(n)) || (opts.min !== undefined && n < opts.min) || (opts.max !== undefined && n > opts.max)) {
    throw new ValidationError(`--${name} must be a ${opts.int ? 'whole ' : ''}number${opts.min !== undefined ? ` >= ${opts.min}` : ''}${opts.max !== undefined ? ` <= ${opts.max}` : ''}, got "${v}"`, { field: name });
  }
  return n;
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      input: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, out: { type: 'string' },
      mode: { type: 'string' }, speakers: { type: 'string' }, start: { type: 'string' }, end: { type: 'string' },
      'source-srt': { type: 'string' }, 'voice-over': { type: 'boolean' }, voice: { type: 'string' }, anonymize: { type: 'string' },
      'srt-profile': { type: 'string' }, 'data-dir': { type: 'string' }, help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (!values.input || !values.from || !values.to) {
    process.stderr.write(USAGE);
    return 2;
  }
  const input = path.resolve(values.input);
  if (!fs.existsSync(input)) throw new ValidationError(`--input ${input} does not exist`, { field: 'input' });
  if (!isSourceLocale(values.from)) throw new ValidationError(`--from ${values.from} is not a supported source locale`, { field: 'from' });
  const targets = values.to.split(',').map((s) => s.trim()).filter(Boolean);
  for (const t of targets) if (!isTargetLocale(t)) throw new ValidationError(`--to ${t} is not a supported target locale`, { field: 'to' });
  const mode = (values.mode ?? 'no_lips') as GenerateMode;
  if (!GENERATE_MODES.includes(mode)) throw new ValidationError(`--mode must be one of ${GENERATE_MODES.join(', ')}`, { field: 'mode' });
  const profile = (values['srt-profile'] ?? 'regular') as SrtProfileName;
  if (!SRT_PROFILES.includes(profile)) throw new ValidationError(`--srt-profile must be one of ${SRT_PROFILES.join(', ')}`, { field: 'srt-profile' });
  if (values['voice-over'] && !values.voice) throw new ValidationError('--voice-over needs --voice (voice_over_library_required)', { field: 'voice' });
  if (values['voice-over'] && mode === 'with_lips') throw new ValidationError('--voice-over cannot be combined with --mode with_lips (voice_over_with_lips_not_allowed)', { field: 'mode' });
  const speakers = num(values.speakers, 'speakers', { int: true, min: 1 });
  const start = num(values.start, 'start', { min: 0 });
  const end = num(values.end, 'end', { min: 0 });
  const anonymize = num(values.anonymize, 'anonymize', { min: 0, max: 1 });
  let sourceSrt: string | undefined;
  if (values['source-srt']) sourceSrt = await fsp.readFile(path.resolve(values['source-srt']), 'utf8');

  const out = path.resolve(values.out ?? 'dub-output');
  const dataDir = path.resolve(values['data-dir'] ?? path.join(out, '.work'));
  await fsp.mkdir(out, { recursive: true });
  const config = loadConfig({ ...process.env, DUB_DATA_DIR: dataDir });
  const logger = createLogger({ level: config.logLevel, name: 'dub-run' });
  const store = new FsBlobStore(path.join(dataDir, 'blobs'));

  // Ids derived from the input, so a rerun on the same data dir resumes from finished stages.
  const stat = await fsp.stat(input);
  const assetId = `ast_run_${inputsHash({ input, size: stat.size, mtime: stat.mtimeMs, from: values.from, start, end, speakers, sourceSrt })}`;
  const versions = targets.map((locale) => ({ version_id: `ver_${assetId.slice(8)}_${locale.replace('-', '')}`, dubbing_id: `dub_${assetId.slice(8)}_${locale.replace('-', '')}`, locale }));
  const uploadKey = blobKeys.sourceUpload(assetId);
  if (!(await store.has(uploadKey))) await store.putFile(uploadKey, input);

  const runtime = createEmbeddedRuntime({ dataDir, store, handlers: createJobHandlers(), config, logger, concurrency: 1 });
  const generation = 1;
  const pending = new Set(versions.map((v) => v.version_id));
  let failure: string | undefined;
  let lastProgress = '';
  const done = new Promise<void>((resolve) => {
    const finish = (id: string) => {
      pending.delete(id);
      if (pending.size === 0) resolve();
    };
    void runtime.events.subscribe(async (ev: WorkerEvent) => {
      if (ev.type === 'progress') {
        const line = `${ev.version_id ? `${ev.version_id.split('_').pop()} ` : ''}${ev.stage} ${(ev.fraction * 100).toFixed(0)}%`;
        if (line !== lastProgress) process.stderr.write(`  ${line}\n`);
        lastProgress = line;
      } else if (ev.type === 'asset_failed') {
        failure = `asset failed: ${ev.error.error_code}: ${ev.error.detail}`;
        resolve();
      } else if (ev.type === 'version_failed' || ev.type === 'version_generate_failed') {
        failure = `${ev.version_id} failed: ${ev.error.error_code}: ${ev.error.detail}`;
        finish(ev.version_id);
      } else if (ev.type === 'version_prepared') {
        const v = versions.find((x) => x.version_id === ev.version_id)!;
        const job: Job = {
          v: 1, type: 'generate-version', job_id: `${ev.version_id}-gen-${generation}`, asset_id: assetId, version_id: ev.version_id,
          locale: v.locale, mode, script_key: ev.script_key, generation,
          options: { ...(values['voice-over'] ? { voice_over: true } : {}), ...(values.voice ? { voice_library_id: values.voice } : {}), ...(anonymize !== undefined ? { voice_anonymization: anonymize } : {}) },
        };
        await runtime.queue.enqueue(job);
      } else if (ev.type === 'version_generated') {
        await writeOutputs(ev.version_id, ev.result_video_key, ev.result_audio_key);
        finish(ev.version_id);
      }
    });
  });

  const writeOutputs = async (versionId: string, videoKey: string, audioKey: string): Promise<void> => {
    const v = versions.find((x) => x.version_id === versionId)!;
    const dir = path.join(out, v.locale);
    await fsp.mkdir(dir, { recursive: true });
    await store.getToFile(videoKey, path.join(dir, 'dubbed.mp4'));
    await store.getToFile(audioKey, path.join(dir, 'dubbed.m4a'));
    const script = JSON.parse((await store.getBuffer(blobKeys.script(versionId))).toString('utf8')) as VersionScript;
    const transcript = JSON.parse((await store.getBuffer(blobKeys.transcript(assetId))).toString('utf8')) as Transcript;
    await fsp.writeFile(path.join(dir, 'script.json'), JSON.stringify(script, null, 2));
    await fsp.writeFile(path.join(out, 'transcript.json'), JSON.stringify(transcript, null, 2));
    const target = formatSubtitles(scriptSubtitles(script), profile, { locale: v.locale });
    const source = formatSubtitles(transcriptSubtitles(transcript), profile, { locale: values.from! });
    await fsp.writeFile(path.join(dir, 'target.srt'), serializeSrt(target));
    await fsp.writeFile(path.join(dir, 'source.srt'), serializeSrt(source));
    process.stdout.write(`${v.locale}: ${path.join(dir, 'dubbed.mp4')}\n`);
  };

  if (sourceSrt !== undefined) {
    const check = validateSrt(sourceSrt);
    if (!check.ok) logger.warn({ err: check.error.message }, 'source SRT is not strictly valid SRT; it is read as text');
  }
  await runtime.queue.enqueue({
    v: 1, type: 'prepare-asset', job_id: `${assetId}-prepare`, asset_id: assetId, locale: values.from, media: { blob: uploadKey },
    ...(start !== undefined ? { start_time: start } : {}), ...(end !== undefined ? { end_time: end } : {}),
    ...(speakers !== undefined ? { speakers_count: speakers } : {}), ...(sourceSrt !== undefined ? { source_srt: sourceSrt } : {}),
    versions,
  });
  process.stderr.write(`dubbing ${input} (${values.from} -> ${targets.join(', ')}) into ${out}\n`);
  await done;
  await runtime.close();
  if (failure) {
    process.stderr.write(`dub run: ${failure}\n`);
    return 1;
  }
  return 0;
}
