/**
 * The library voice catalogue (voices.json: espeak-ng variants that narrate every target language)
 * and on-demand previews rendered with espeak-ng into a cached WAV blob.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { getLocale, languageOf, ProcessError, TARGET_LOCALES, ValidationError, NotFoundError, type BlobStore } from '@dub/core';

export interface LibraryVoice {
  voice_id: string;
  name: string;
  gender: 'female' | 'male';
  espeak_variant: string;
  pitch: number;
  speed: number;
}

interface CatalogueFile {
  voices: LibraryVoice[];
  preview_text: Record<string, string>;
}

export class VoiceCatalog {
  readonly voices: readonly LibraryVoice[];
  private readonly previewText: Record<string, string>;

  constructor(file: CatalogueFile) {
    this.voices = file.voices;
    this.previewText = file.preview_text;
  }

  static load(): VoiceCatalog {
    const url = new URL('../src/voices.json', import.meta.url);
    const alt = new URL('./voices.json', import.meta.url);
    const p = fs.existsSync(url) ? url : alt;
    return new VoiceCatalog(JSON.parse(fs.readFileSync(p, 'utf8')) as CatalogueFile);
  }

  get(id: string): LibraryVoice | undefined {
    return this.voices.find((v) => v.voice_id === id);
  }

  has(id: string): boolean {
    return this.get(id) !== undefined;
  }

  /** Every library voice narrates every target locale (the variant is applied to the locale's voice). */
  languages(): string[] {
    return [...TARGET_LOCALES];
  }

  previewKey(id: string, locale: string): string {
    return `voices/${id}/preview-${locale}.wav`;
  }

  /** The preview WAV blob key, rendering it with espeak-ng when not cached yet. */
  async preview(store: BlobStore, id: string, locale = 'en-US', espeakBin = 'espeak-ng'): Promise<string> {
    const voice = this.get(id);
    if (!voice) throw new NotFoundError(`voice ${id} not found`);
    const loc = getLocale(locale);
    if (!loc || !loc.target) throw new ValidationError(`locale: unsupported target locale "${locale}"`, { field: 'locale' });
    const key = this.previewKey(id, locale);
    if (await store.has(key)) return key;
    const text = this.previewText[languageOf(locale)] ?? this.previewText.en!;
    const wav = await runEspeak(espeakBin, ['--stdout', '-v', `${loc.espeakVoice}+${voice.espeak_variant}`, '-p', String(voice.pitch), '-s', String(voice.speed), text]);
    await store.put(key, wav);
    return key;
  }
}

function runEspeak(bin: string, args: string[]): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const p = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    p.stdout.on('data', (c: Buffer) => out.push(c));
    p.stderr.on('data', (c: Buffer) => (err = (err + c.toString()).slice(-2000)));
    p.on('error', (e) => reject(new ProcessError(`cannot run ${bin}: ${e.message}`, { exitCode: null, stderrTail: '', cause: e })));
    p.on('close', (code, signal) => {
      if (code === 0 && out.length > 0) resolve(Buffer.concat(out));
      else reject(new ProcessError(`${bin} exited with ${code ?? signal}: ${err.trim()}`, { exitCode: code, signal, stderrTail: err }));
    });
  });
}
