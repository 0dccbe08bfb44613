import { describe, expect, it } from 'vitest';
import { resolveContext, ValidationError } from '@dub/core';
import { createEspeakEngine, espeakArgs } from './engines/espeak-engine.js';
import { TTS_CONFORMANCE_CHECKS } from './testing/tts-conformance.js';
import { synthesize } from './synthesize.js';
import { DEFAULT_VOICE } from './types.js';
import { speechExtent } from './analysis/activity.js';

const ctx = resolveContext();

describe('espeak-ng engine: conformance', () => {
  const engine = createEspeakEngine();
  for (const c of TTS_CONFORMANCE_CHECKS) it(c.name, () => c.run(engine, { locale: 'es-ES', text: 'Hola, ¿cómo estás? Muy bien, gracias.' }));
});

describe('espeak-ng engine', () => {
  it('builds the voice, rate, pitch and amplitude arguments from the request', () => {
    const args = espeakArgs({ text: 'x', locale: 'es-MX', speed: 1.5, voice: { variant: 'f3', pitch: 70.4, wordsPerMinute: 160, amplitude: 90 } }, '/tmp/o.wav');
    expect(args).toEqual(['-v', 'es-419+f3', '-s', '240', '-p', '70', '-a', '90', '-z', '-w', '/tmp/o.wav', '--stdin']);
    expect(espeakArgs({ text: 'x', locale: 'en-US', speed: 10, voice: DEFAULT_VOICE }, 'o.wav').slice(0, 4)).toEqual(['-v', 'en-us', '-s', '450']);
  });

  it('rejects unknown locales and variants that could smuggle options', () => {
    expect(() => espeakArgs({ text: 'x', locale: 'xx-XX', speed: 1, voice: DEFAULT_VOICE }, 'o.wav')).toThrow(ValidationError);
    expect(() => espeakArgs({ text: 'x', locale: 'en-US', speed: 1, voice: { ...DEFAULT_VOICE, variant: 'f3 -w /etc/x' } }, 'o.wav')).toThrow(ValidationError);
  });

  it('speaks text that looks like options as text (stdin, no shell)', async () => {
    const engine = createEspeakEngine();
    const a = await engine.synthesize({ text: '-v xx --help "; rm -rf /', locale: 'en-US', speed: 1, voice: DEFAULT_VOICE }, ctx);
    expect(a.channels[0]!.length).toBeGreaterThan(22050 * 0.5);
  });

  it('synthesize() works alone with a library voice, and the text is spoken without long edge silence', async () => {
    const a = await synthesize('Buenos días a todos.', { locale: 'es-ES', libraryVoice: 'ana' });
    const x = a.channels[0]!;
    const ext = speechExtent(x, a.sampleRate);
    expect(a.sampleRate).toBe(22050);
    expect(ext.start / a.sampleRate).toBeLessThan(0.15);
    expect((x.length - ext.end) / a.sampleRate).toBeLessThan(0.15);
  });
});
