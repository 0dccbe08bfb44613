/**
 * Library voices as the API serves them: the catalogue is @dub/voice's (the same voices the
 * generation stage narrates with when voice_library_id is set), and previews are synthesized on
 * demand with @dub/voice into a cached WAV blob.
 */
import fs from 'node:fs';
import { getLocale, languageOf, NotFoundError, ValidationError, type BlobStore } from '@dub/core';
import { encodeWav } from '@dub/media';
import { listLibraryVoices, synthesize, type LibraryVoice } from '@dub/voice';

export type { LibraryVoice };

export class VoiceCatalog {
  constructor(
    readonly voices: readonly LibraryVoice[],
    private readonly previewText: Record<string, string>,
  ) {}

  static load(): VoiceCatalog {
    const url = new URL('../src/voice-previews.json', import.meta.url);
    const alt = new URL('./voice-previews.json', import.meta.url);
    const texts = JSON.parse(fs.readFileSync(fs.existsSync(url) ? url : alt, 'utf8')) as { preview_text: Record<string, string> };
    return new VoiceCatalog(listLibraryVoices(), texts.preview_text);
  }

  get(id: string): LibraryVoice | undefined {
    return this.voices.find((v) => v.id === id);
  }

  has(id: string): boolean {
    return this.get(id) !== undefined;
  }

  previewKey(id: string, locale: string): string {
    return `voices/${id}/preview-${locale}.wav`;
  }

  /** The preview WAV blob key, synthesizing it when not cached yet. */
  async preview(store: BlobStore, id: string, locale = 'en-US'): Promise<string> {
    const voice = this.get(id);
    if (!voice) throw new NotFoundError(`voice ${id} not found`);
    if (!getLocale(locale)?.target) throw new ValidationError(`locale: unsupported target locale "${locale}"`, { field: 'locale' });
    if (!voice.languages.includes(locale)) throw new ValidationError(`locale: voice ${id} does not speak ${locale}`, { field: 'locale' });
    const key = this.previewKey(id, locale);
    if (await store.has(key)) return key;
    const text = this.previewText[languageOf(locale)] ?? this.previewText.en!;
    const audio = await synthesize(text, { locale, libraryVoice: id });
    await store.put(key, encodeWav(audio, { format: 'pcm16' }));
    return key;
  }
}
