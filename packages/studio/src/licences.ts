/**
 * The header's licence warning (issue #25): the version's engine records (the API's Version
 * `engines`) carry each weight's licence and whether a business may use it commercially; when a
 * weight that is not cleared (`no` or `unclear`) made the dub, the header says which and under
 * which licence. Kept here, not imported from @dub/core: the page loads no server package code.
 */
import type { EngineRecord } from '@dub/core';

/** One record that ran weights not cleared for commercial use. */
export interface LicenceWarning {
  stage: string;
  label: string;
  license: string;
  commercial: 'no' | 'unclear';
}

/** The records among `engines` whose weights are not cleared for commercial use, in record order. */
export function unclearedWeights(engines: Record<string, EngineRecord> | undefined): LicenceWarning[] {
  const out: LicenceWarning[] = [];
  for (const [stage, e] of Object.entries(engines ?? {})) {
    if (e.commercial === 'no' || e.commercial === 'unclear') out.push({ stage, label: e.label ?? e.id, license: e.license ?? 'unknown licence', commercial: e.commercial });
  }
  return out;
}

/** The header line: undefined when every weight that ran is cleared (or the version has no result yet). */
export function licenceWarningText(engines: Record<string, EngineRecord> | undefined): string | undefined {
  const w = unclearedWeights(engines);
  if (!w.length) return undefined;
  const parts = w.map((x) => `${x.stage}: ${x.label} (${x.license}; commercial use ${x.commercial})`);
  return `Not cleared for commercial use: ${parts.join('; ')}. The service's NOTICE and --model-policy commercial (DUB_MODEL_POLICY) say more.`;
}
