/**
 * The report of a generation (generate-quality-report.ts builds it): the lines' placement,
 * loudness, back-transcription and similarity, the outputs' measurements, the stage times and the
 * engines, stored as report.json under the generation number. No progress share of its own.
 */
import { QualityReportSchema, validate, type QualityReport } from '@dub/core';
import { buildQualityReport } from '../generate-quality-report.js';
import { qualityLines } from '../generate-quality-stage.js';
import { withRates, withTurns } from '../generate-rates.js';
import { generationEngines } from './engines.js';
import { unweightedStage } from '../pipeline-stage.js';
import type { GenerateStage } from './state.js';

export const reportStage: GenerateStage = unweightedStage({
  name: 'report',
  inputs: ['synth', 'quality', 'normalization'],
  async run(s) {
    const synth = s.synth!;
    const { script, transcript, segments, utterances, shortener } = synth;
    const quality = s.quality!;
    const engines = await generationEngines(s.rt, synth, s.lipsRecord, s.releasedSessions);
    const report = validate<QualityReport>(
      QualityReportSchema,
      withTurns(withRates(buildQualityReport({
        job: s.job,
        sourceLocale: script.source_locale,
        voiceOverDelay: s.voiceOver ? synth.voiceOverDelay : 0,
        speedCap: synth.speedCap,
        speedLimit: synth.speedLimit,
        shortening: { engine: shortener.engine, possible: shortener.possible, reason: shortener.reason, ...(shortener.method ? { method: shortener.method } : {}) },
        lines: qualityLines(segments, utterances),
        measured: quality.measured,
        similarityEngine: quality.similarityEngine,
        stages: s.runner.timings,
        engines,
        transcript,
        voiceSources: synth.voices.value.sources,
        normalization: s.normalization!,
        now: new Date(),
      }), synth.pace, segments), segments, synth.turns),
      'quality report',
    );
    const reportKey = s.job.keys.qualityReport;
    await s.rt.store.put(reportKey, Buffer.from(JSON.stringify(report, null, 2)));
    return { engines, report, reportKey };
  },
});
