import { describe, expect, it } from 'vitest';
import { columnPeaks, decodeWaveform, findSilences, nextBoundary, snapEdge, type WaveformData } from './waveform.js';

const level = (db: number) => Math.max(1, Math.round((1 - db / -90) * 255));

/** A waveform of `rate` windows/s from [seconds, dB] runs. */
function wave(runs: [number, number][], rate = 50): WaveformData {
  const bytes: number[] = [];
  for (const [sec, db] of runs) for (let i = 0; i < Math.round(sec * rate); i++) bytes.push(db <= -90 ? 0 : level(db));
  const a = Uint8Array.from(bytes);
  return { rate, duration: a.length / rate, floorDb: -90, peak: a, rms: a.slice() };
}

describe('decodeWaveform', () => {
  it('reads the API body (base64 bytes) and checks its length', () => {
    const b64 = (a: number[]) => Buffer.from(a).toString('base64');
    const w = decodeWaveform({ asset_id: 'a', rate: 50, duration: 0.06, count: 3, encoding: 'u8-db', floor_db: -90, peak: b64([0, 128, 255]), rms: b64([0, 100, 200]) });
    expect(Array.from(w.peak)).toEqual([0, 128, 255]);
    expect(Array.from(w.rms)).toEqual([0, 100, 200]);
    expect(() => decodeWaveform({ asset_id: 'a', rate: 50, duration: 0.06, count: 4, encoding: 'u8-db', floor_db: -90, peak: b64([0, 1, 2]), rms: b64([0, 1, 2]) })).toThrow(/3\/3 windows, not 4/);
  });
});

describe('findSilences', () => {
  it('finds the pauses between speech from the recording\'s own levels', () => {
    // speech at -20 dB, pauses at -60 dB (a noisy room: the floor is not digital silence)
    const w = wave([[1, -20], [0.5, -60], [2, -22], [0.1, -60], [1, -18], [0.3, -58], [0.5, -20]]);
    const s = findSilences(w);
    expect(s.map((x) => [x.start, x.end])).toEqual([
      [1, 1.5],
      [4.6, 4.9],
    ]);
  });
  it('the same shape 30 dB quieter gives the same pauses (no fixed dBFS threshold)', () => {
    const loud = findSilences(wave([[1, -20], [0.5, -60], [2, -22], [0.3, -58], [1, -20]]));
    const quiet = findSilences(wave([[1, -50], [0.5, -89], [2, -52], [0.3, -88], [1, -50]]));
    expect(quiet).toEqual(loud);
  });
  it('no pauses in a recording without level contrast, and none in an empty one', () => {
    expect(findSilences(wave([[3, -20], [0.5, -22], [3, -19]]))).toEqual([]);
    expect(findSilences(wave([]))).toEqual([]);
  });
});

describe('snapping', () => {
  const pauses = [
    { start: 1, end: 1.5 },
    { start: 3, end: 3.2 },
    { start: 6, end: 7 },
  ];
  it('an end snaps to a pause start, a start to a pause end, within the radius', () => {
    expect(snapEdge(2.95, 'end', pauses, 0.1)).toBe(3);
    expect(snapEdge(3.15, 'end', pauses, 0.1)).toBeUndefined();
    expect(snapEdge(3.15, 'start', pauses, 0.1)).toBe(3.2);
    expect(snapEdge(1.45, 'start', pauses, 0.1)).toBe(1.5);
    expect(snapEdge(4, 'start', pauses, 0.1)).toBeUndefined();
    expect(snapEdge(4, 'start', [], 0.1)).toBeUndefined();
  });
  it('the next and previous boundary of an edge\'s kind', () => {
    expect(nextBoundary(2, 'end', pauses, 1)).toBe(3);
    expect(nextBoundary(3, 'end', pauses, 1)).toBe(6);
    expect(nextBoundary(3, 'end', pauses, -1)).toBe(1);
    expect(nextBoundary(2, 'start', pauses, -1)).toBe(1.5);
    expect(nextBoundary(8, 'start', pauses, 1)).toBeUndefined();
  });
});

describe('columnPeaks', () => {
  it('the highest peak under each column, whether a column spans many windows or a part of one', () => {
    const w = wave([[0.1, -40], [0.02, -6], [0.08, -40]]); // 10 windows, the 6th loud
    expect(Array.from(columnPeaks(w, 0, 0.2, 2))).toEqual([level(-40), level(-6)]);
    expect(Array.from(columnPeaks(w, 0.1, 0.12, 4))).toEqual([level(-6), level(-6), level(-6), level(-6)]);
    expect(Array.from(columnPeaks(w, 0.5, 0.6, 3))).toEqual([0, 0, 0]);
  });
});
