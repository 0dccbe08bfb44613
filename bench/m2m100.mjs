// The offline model's throughput (issue 23): M2M100 418M q8 translating a 5-minute script (80
// dialogue lines, about 3.75 s each) en-US -> de-DE and en-US -> fr-FR, with the default beams and
// greedy, on this machine's CPU (or DUB_DEVICE). Prints sentences per second and the peak RSS of
// the process. Needs the model: npx dub models fetch m2m100-418m (or DUB_MODELS_DIR with its files).
//   node bench/m2m100.mjs [--beams N] [--threads N]
import { parseArgs } from 'node:util';
import { loadTranslateConfig, m2m100Installed, createTranslator } from '@dub/translate';

const { values } = parseArgs({ options: { beams: { type: 'string' }, threads: { type: 'string' } } });
const config = loadTranslateConfig(process.env);
if (!m2m100Installed({ model: config.m2m100.model, modelsDir: config.m2m100.modelsDir })) {
  console.error(`bench/m2m100.mjs: ${config.m2m100.model} is not installed here: npx dub models fetch ${config.m2m100.model} (or DUB_MODELS_DIR with its files)`);
  process.exit(2);
}

const LINES = [
  'Good morning, and thank you all for coming today.',
  'I want to start with a short story about how this project began.',
  'Three years ago, we had a small team and a very big problem.',
  'Our customers could not understand the videos we made for them.',
  'So we asked ourselves a simple question: what if every video spoke their language?',
  'At first, the answer was expensive studios and weeks of waiting.',
  'Then we tried automatic tools, and the results were not good enough.',
  'The voices sounded flat, and the timing was always a little off.',
  'We decided to build something better, step by step.',
  'Today I will show you where we are, and where we are going next.',
  'Let me open the first example on the screen behind me.',
  'This is a product demo recorded in English last week.',
  'Now listen to the same demo in Spanish, with the same voice.',
  'Notice how the pauses stay where the speaker placed them.',
  'That matters more than you might think for people watching.',
  'Of course, names and brands must not be translated.',
  'We keep a glossary for each customer, and it is applied everywhere.',
  'Does anyone have a question so far? Yes, in the back.',
  'That is a good point: some languages need more words than others.',
  'When a line is too long, we look for a shorter translation that still fits.',
];
const segments = Array.from({ length: 80 }, (_, i) => ({ id: `s${i}`, text: LINES[i % LINES.length], duration: 3.75 }));

const runs = [];
for (const beams of values.beams ? [Number(values.beams)] : [undefined, 1]) {
  const cfg = { ...config, m2m100: { ...config.m2m100, ...(beams ? { beams } : {}), ...(values.threads ? { threads: Number(values.threads) } : {}) } };
  const t = await createTranslator('m2m100', cfg);
  await t.translate({ sourceLocale: 'en-US', targetLocale: 'de-DE', segments: segments.slice(0, 2) }); // load the sessions
  for (const target of ['de-DE', 'fr-FR']) {
    const t0 = performance.now();
    const out = await t.translate({ sourceLocale: 'en-US', targetLocale: target, segments });
    const s = (performance.now() - t0) / 1000;
    runs.push({ target, beams: beams ?? 'default (generation_config)', sentences: out.length, seconds: +s.toFixed(1), sentencesPerSecond: +(out.length / s).toFixed(2), sample: out[4].text });
  }
}
console.log(JSON.stringify({ model: config.m2m100.model, device: config.m2m100.device, threads: values.threads ?? config.m2m100.threads, peakRssMB: Math.round(process.resourceUsage().maxRSS / 1024), runs }, null, 1));
