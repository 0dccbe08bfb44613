/**
 * A Piper voice's `<voice>.onnx.json`: sample rate, espeak-ng voice for phonemization, inference
 * scales, phoneme -> id map (with the "^" BOS, "$" EOS and "_" pad symbols) and speakers.
 */
import fsp from 'node:fs/promises';
import { ModelError } from '@dub/core';

export interface PiperVoiceConfig {
  sampleRate: number;
  espeakVoice: string;
  noiseScale: number;
  lengthScale: number;
  noiseW: number;
  phonemeIdMap: Map<string, number[]>;
  numSpeakers: number;
  speakerIdMap: Record<string, number>;
}

interface RawConfig {
  audio?: { sample_rate?: number };
  espeak?: { voice?: string };
  inference?: { noise_scale?: number; length_scale?: number; noise_w?: number };
  phoneme_type?: string;
  phoneme_id_map?: Record<string, number[]>;
  num_speakers?: number;
  speaker_id_map?: Record<string, number>;
}

export const PIPER_BOS = '^';
export const PIPER_EOS = '$';
export const PIPER_PAD = '_';

export function parsePiperConfig(json: unknown, file = 'voice config'): PiperVoiceConfig {
  const raw = json as RawConfig;
  const map = raw?.phoneme_id_map;
  if (!map || typeof map !== 'object') throw new ModelError(`${file}: phoneme_id_map is missing`);
  if (raw.phoneme_type !== undefined && raw.phoneme_type !== 'espeak') {
    throw new ModelError(`${file}: phoneme_type "${raw.phoneme_type}" is not supported (only espeak)`);
  }
  const phonemeIdMap = new Map<string, number[]>();
  for (const [k, v] of Object.entries(map)) {
    if (!Array.isArray(v) || v.some((x) => !Number.isInteger(x))) throw new ModelError(`${file}: phoneme_id_map["${k}"] is not a list of integers`);
    phonemeIdMap.set(k, v);
  }
  for (const s of [PIPER_BOS, PIPER_EOS, PIPER_PAD]) if (!phonemeIdMap.has(s)) throw new ModelError(`${file}: phoneme_id_map lacks "${s}"`);
  const sampleRate = raw.audio?.sample_rate ?? 22050;
  if (!Number.isInteger(sampleRate) || sampleRate < 8000) throw new ModelError(`${file}: invalid audio.sample_rate`);
  return {
    sampleRate,
    espeakVoice: raw.espeak?.voice ?? 'en-us',
    noiseScale: raw.inference?.noise_scale ?? 0.667,
    lengthScale: raw.inference?.length_scale ?? 1,
    noiseW: raw.inference?.noise_w ?? 0.8,
    phonemeIdMap,
    numSpeakers: raw.num_speakers ?? 1,
    speakerIdMap: raw.speaker_id_map ?? {},
  };
}

export async function loadPiperConfig(file: string): Promise<PiperVoiceConfig> {
  let text: string;
  try {
    text = await fsp.readFile(file, 'utf8');
  } catch (e) {
    throw new ModelError(`cannot read Piper voice config ${file}: ${(e as Error).message}`, { cause: e });
  }
  try {
    return parsePiperConfig(JSON.parse(text), file);
  } catch (e) {
    if (e instanceof ModelError) throw e;
    throw new ModelError(`Piper voice config ${file} is not JSON: ${(e as Error).message}`, { cause: e });
  }
}
