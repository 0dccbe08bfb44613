// Issue 23, "a European Portuguese voice": how intelligible each way of speaking pt-PT here is to
// the project's back-transcription (Whisper base q8, language pt forced, the quality stage's
// decoding options BACK_TRANSCRIPTION_WHISPER), sentence by sentence, at speed 1:
//   espeak-ng        espeak-ng's formant pt voice (what auto spoke pt-PT with before), variants f1, m1
//   kokoro-pt-br     Kokoro-82M int8's Brazilian voices pf_dora, pm_alex fed espeak-ng 'pt-br'
//                    phonemes (Kokoro's own pipeline for its Portuguese voices)
//   kokoro-pt        the same voices fed espeak-ng 'pt' phonemes (European Portuguese): the engine's
//                    pt-PT (KOKORO_LANGUAGES['pt-PT'])
// Twelve ordinary European Portuguese sentences written for this bench (no recording): the first
// eight chose the option, the last four are held out and were heard only after the choice.
// Prints per option and voice the mean WER on each set, the CPU seconds of synthesis, and with
// --texts every transcript.
//
// Usage (after `npm run build`): flock /tmp/bench.lock node bench/pt-pt-voice.mjs [--texts] [--json FILE]
//   [--options espeak-ng,kokoro-pt-br,kokoro-pt]
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { silentLogger } from '@dub/core';
import { SessionCache } from '@dub/onnx';
import { transcribe, wordErrorRate } from '@dub/asr';
import { BACK_TRANSCRIPTION_WHISPER } from '@dub/pipeline';
import { createEspeakEngine, createKokoroEngine, DEFAULT_VOICE } from '@dub/voice';

const { values } = parseArgs({ options: { texts: { type: 'boolean', default: false }, json: { type: 'string' }, options: { type: 'string' } } });

export const TUNING = [
  'O comboio para Lisboa parte às nove horas da manhã.',
  'Podes ajudar-me a levar estas caixas para o carro?',
  'A reunião foi adiada para a próxima semana.',
  'Ontem à noite jantámos num restaurante perto do rio.',
  'O meu irmão trabalha numa empresa de software no Porto.',
  'Não te esqueças de fechar a janela antes de saíres.',
  'Os resultados do estudo serão publicados em março.',
  'Gostava de marcar uma consulta para amanhã de manhã.',
];
export const HELD_OUT = [
  'A câmara municipal vai renovar o jardim no centro da cidade.',
  'Ela comprou pão fresco na padaria da esquina.',
  'Temos de entregar o relatório até sexta-feira.',
  'O autocarro estava cheio e tivemos de ir a pé.',
];

const ctx = { logger: silentLogger, signal: undefined, onProgress: () => {} };
const espeak = createEspeakEngine({});
const kokoro = createKokoroEngine({});
const OPTIONS = [
  { name: 'espeak-ng', engine: espeak, locale: 'pt-PT', voices: [{ id: 'f1', v: { ...DEFAULT_VOICE, variant: 'f1' } }, { id: 'm1', v: { ...DEFAULT_VOICE, variant: 'm1' } }] },
  { name: 'kokoro-pt-br', engine: kokoro, locale: 'pt-BR', voices: [{ id: 'pf_dora', v: { ...DEFAULT_VOICE, variant: 'f1', model: 'pf_dora' } }, { id: 'pm_alex', v: { ...DEFAULT_VOICE, variant: 'm1', model: 'pm_alex' } }] },
  { name: 'kokoro-pt', engine: kokoro, locale: 'pt-PT', voices: [{ id: 'pf_dora', v: { ...DEFAULT_VOICE, variant: 'f1', model: 'pf_dora' } }, { id: 'pm_alex', v: { ...DEFAULT_VOICE, variant: 'm1', model: 'pm_alex' } }] },
];

const sessions = new SessionCache();
const rows = [];
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };
const only = values.options ? values.options.split(',') : undefined;
for (const o of OPTIONS.filter((x) => !only || only.includes(x.name))) {
  for (const { id, v } of o.voices) {
    const row = { option: o.name, voice: id, synthCpu: 0, tuning: [], heldOut: [], texts: [] };
    for (const [set, list] of [['tuning', TUNING], ['heldOut', HELD_OUT]]) {
      for (const text of list) {
        const c0 = cpu();
        const audio = await o.engine.synthesize({ text, locale: o.locale, voice: v, speed: 1 }, ctx);
        row.synthCpu += cpu() - c0;
        let heard = '';
        try {
          const t = await transcribe(audio, { locale: 'pt-PT', engine: 'whisper', sessions, whisper: BACK_TRANSCRIPTION_WHISPER }, ctx);
          heard = t.segments.map((s) => s.text).join(' ').trim();
        } catch (e) {
          if (e.code !== 'empty_transcript') throw e;
        }
        const wer = wordErrorRate(text, heard).wer;
        row[set].push(wer);
        row.texts.push({ set, text, heard, wer });
      }
    }
    rows.push(row);
    const mean = (a) => a.reduce((x, y) => x + y, 0) / a.length;
    console.log(`${o.name.padEnd(13)} ${id.padEnd(8)} WER tuning ${mean(row.tuning).toFixed(3)}  held-out ${mean(row.heldOut).toFixed(3)}  all ${mean([...row.tuning, ...row.heldOut]).toFixed(3)}  synthesis CPU ${row.synthCpu.toFixed(1)} s`);
    if (values.texts) for (const t of row.texts) console.log(`   ${t.set === 'tuning' ? 'T' : 'H'} ${t.wer.toFixed(2)} ${t.heard}`);
  }
}
if (values.json) fs.writeFileSync(values.json, JSON.stringify(rows, null, 2));
await kokoro.dispose?.();
await sessions.disposeAll();
