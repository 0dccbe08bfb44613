// Kokoro's length response to its `speed` input (KOKORO_SPEED_RESPONSE in
// packages/voice/src/engines/kokoro.ts): sentences written for this measurement (not the shared
// recordings), Spanish, French, Italian and English, each spoken by one of its language's voices
// in turn (7 voices, both genders) at speeds 0.7..1.6. A line's length is its audio with the silence trimmed (trimSilence, as the
// duration fitting measures it); its response at a speed is that length over its length at speed 1.
// The sentences are split before fitting: per language the first two (FIT) fit the response, the
// other two (HELD) only test it. Fitted: length(s) = length(1) * s^-k, one k for all speeds and
// one per side of 1 (k slow for s < 1, k fast for s > 1), least squares on log length ratios.
// Printed: each line's ratios, the fitted exponents, and on the held-out lines the error of the
// length each response predicts from the line's length at speed 1 (|predicted / measured - 1|:
// mean, p90, max), beside 1/speed (k = 1), and that of the response in kokoro.ts as built.
// Load average and CPU seconds before/after.
//
// Usage (after `npm run build`): flock /tmp/bench.lock nice -n 5 node bench/kokoro-speed.mjs
//   [--speeds 0.7,0.8,...] [--json FILE] (the lengths, for --from-json FILE: the fits again, no synthesis)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { speeds: { type: 'string', default: '0.7,0.8,0.9,1,1.2,1.4,1.6' }, json: { type: 'string' }, 'from-json': { type: 'string' } } });
const saved = values['from-json'] ? JSON.parse(fs.readFileSync(values['from-json'], 'utf8')) : undefined;
const SPEEDS = saved ? saved.speeds : values.speeds.split(',').map(Number);
if (!SPEEDS.includes(1)) SPEEDS.push(1);

const LANGS = {
  'es-ES': {
    voices: ['ef_dora', 'em_alex'],
    fit: ['Mañana temprano salimos hacia la montaña, si el tiempo lo permite.', 'No sé.'],
    held: ['La biblioteca del barrio cierra a las ocho, pero los sábados abre hasta la medianoche para los estudiantes.', '¿Me pasas la sal, por favor?'],
  },
  'fr-FR': {
    voices: ['ff_siwis'],
    fit: ["Nous avons repeint la cuisine en jaune pendant les vacances d'été.", "D'accord, à demain."],
    held: ['Le train de nuit pour Marseille part de la gare de Lyon un peu avant onze heures, sauf le dimanche.', 'Il fait froid ce matin.'],
  },
  'it-IT': {
    voices: ['if_sara', 'im_nicola'],
    fit: ['Ogni giovedì mia nonna prepara le lasagne per tutta la famiglia.', 'Va bene, grazie.'],
    held: ['Il museo resterà chiuso per lavori fino alla fine di marzo, ma la mostra fotografica si sposta in biblioteca.', 'Dove hai parcheggiato?'],
  },
  'en-US': {
    voices: ['af_heart', 'am_adam'],
    fit: ['The bakery on the corner sells out of rye bread before nine every morning.', 'Sounds good to me.'],
    held: ['If the ferry is delayed again, we will take the long road around the lake and stop for lunch in the village.', 'Close the window, please.'],
  },
};

const { createKokoroEngine, trimSilence, toMono, tableSpeedResponse, KOKORO_SPEED_RESPONSE } = await import(path.join(root, 'packages/voice/dist/index.js'));
const { silentLogger } = await import(path.join(root, 'packages/core/dist/index.js'));
const engine = saved ? undefined : createKokoroEngine({ threads: 2 });
const ctx = { logger: silentLogger };
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
const load = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');
const started = { wall: Date.now(), cpu: cpu(), load: load() };

/** Lines: { set, locale, voice, text, units, seconds: { [speed]: s } }. */
const lines = saved ? saved.lines : [];
for (const [locale, l] of saved ? [] : Object.entries(LANGS)) {
  for (const [set, texts] of [['fit', l.fit], ['held', l.held]]) {
    for (const [i, text] of texts.entries()) {
      // each sentence by one of the language's voices, in turn (the set holds both voices where the language has two)
      for (const model of [l.voices[i % l.voices.length]]) {
        const voice = { variant: '', pitch: 50, wordsPerMinute: 165, amplitude: 100, model };
        const units = await engine.lengthUnits({ text, locale, voice }, ctx);
        const seconds = {};
        for (const speed of SPEEDS) {
          const a = await engine.synthesize({ text, locale, voice, speed }, ctx);
          seconds[speed] = trimSilence(toMono(a), a.sampleRate).length / a.sampleRate;
        }
        const line = { set, locale, voice: model, text, units, seconds };
        lines.push(line);
        console.log(`${set}\t${model}\t${units} tok\t1: ${seconds[1].toFixed(2)} s\t` + SPEEDS.filter((s) => s !== 1).map((s) => `${s}: ${(seconds[s] / seconds[1]).toFixed(3)}`).join('  ') + `\t${text.slice(0, 40)}`);
      }
    }
  }
}
if (!saved) await engine.dispose();

/** Least-squares k of log(ratio) = -k log(s) over the given lines and speeds. */
function fitK(ls, keep) {
  let num = 0;
  let den = 0;
  for (const l of ls) {
    for (const s of SPEEDS) {
      if (s === 1 || !keep(s)) continue;
      const lr = Math.log(l.seconds[s] / l.seconds[1]);
      num += -lr * Math.log(s);
      den += Math.log(s) ** 2;
    }
  }
  return num / den;
}
const fit = lines.filter((l) => l.set === 'fit');
const held = lines.filter((l) => l.set === 'held');
const k = fitK(fit, () => true);
const kSlow = fitK(fit, (s) => s < 1);
const kFast = fitK(fit, (s) => s > 1);
const q = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * (s.length - 1) + 0.5))];
};
function errors(ls, ratio) {
  const e = [];
  for (const l of ls) for (const s of SPEEDS) if (s !== 1) e.push(Math.abs((l.seconds[1] * ratio(s)) / l.seconds[s] - 1));
  return { mean: e.reduce((a, x) => a + x, 0) / e.length, p90: q(e, 0.9), max: Math.max(...e), n: e.length };
}
// per measured speed, the geometric mean ratio of the fitting lines: the table response (log-log linear between them)
const table = SPEEDS.filter((s) => s !== 1).map((s) => [s, Math.exp(fit.reduce((a, l) => a + Math.log(l.seconds[s] / l.seconds[1]), 0) / fit.length)]);
const tabled = tableSpeedResponse('fitted', table);
console.log(`table (speed, ratio) from the fitting set: ${JSON.stringify(table.map(([s, r]) => [s, Math.round(r * 1000) / 1000]))}`);
const RESPONSES = {
  'inverse (k=1)': (s) => 1 / s,
  [`one k = ${k.toFixed(3)}`]: (s) => s ** -k,
  [`piecewise k slow ${kSlow.toFixed(3)}, fast ${kFast.toFixed(3)}`]: (s) => s ** -(s < 1 ? kSlow : kFast),
  'table (log-log linear)': (s) => tabled.lengthRatio(s),
  ...(KOKORO_SPEED_RESPONSE ? { 'kokoro.ts as built': (s) => KOKORO_SPEED_RESPONSE.lengthRatio(s) } : {}),
};
console.log(`\nfitted on ${fit.length} lines (${fit.length * (SPEEDS.length - 1)} ratios): k ${k.toFixed(3)}; k slow (s<1) ${kSlow.toFixed(3)}, k fast (s>1) ${kFast.toFixed(3)}`);
console.log('mean ratio per speed, fit / held:');
for (const s of SPEEDS.filter((x) => x !== 1)) {
  const m = (ls) => ls.reduce((a, l) => a + l.seconds[s] / l.seconds[1], 0) / ls.length;
  console.log(`  ${s}: ${m(fit).toFixed(3)} / ${m(held).toFixed(3)}  (1/s ${(1 / s).toFixed(3)})`);
}
console.log('held-out error |predicted / measured - 1| (mean / p90 / max), fitting set in brackets:');
for (const [name, r] of Object.entries(RESPONSES)) {
  const h = errors(held, r);
  const f = errors(fit, r);
  console.log(`  ${name}: ${h.mean.toFixed(3)} / ${h.p90.toFixed(3)} / ${h.max.toFixed(3)} (n ${h.n})  [${f.mean.toFixed(3)} / ${f.p90.toFixed(3)} / ${f.max.toFixed(3)}]`);
}
console.log(`\nwall ${((Date.now() - started.wall) / 1000).toFixed(1)} s, CPU ${(cpu() - started.cpu).toFixed(1)} s, load ${started.load} -> ${load()} (${os.cpus().length} cores)`);
if (values.json) fs.writeFileSync(values.json, JSON.stringify({ speeds: SPEEDS, k, kSlow, kFast, lines }, null, 2));
