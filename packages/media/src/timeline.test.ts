import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DubError } from '@dub/core';
import { readWav, renderTimeline, renderTimelineBuffer, WavReader, writeWav, type Placement } from './index.js';
import { tempDir } from '../test-support/media-fixtures.js';

let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  tmp = await tempDir();
});
afterAll(async () => {
  await tmp.cleanup();
});

const click = (n = 1, v = 0.5): Float32Array[] => [new Float32Array(n).fill(v)];
function nonZero(x: Float32Array): number[] {
  const idx: number[] = [];
  x.forEach((v, i) => {
    if (v !== 0) idx.push(i);
  });
  return idx;
}

describe('renderTimeline', () => {
  it('places a click at exactly frame N, across window boundaries', async () => {
    const positions = [0, 4095, 4096, 4097, 12345, 159999];
    const out = tmp.file('clicks.wav');
    const res = await renderTimeline(out, { sampleRate: 16000, channels: 1, frames: 160000, windowFrames: 4096 }, positions.map((atFrame) => ({ atFrame, audio: click() })));
    expect(res.frames).toBe(160000);
    expect(res.peak).toBe(0.5);
    const wav = await readWav(out);
    expect(wav.channels[0]!.length).toBe(160000);
    expect(nonZero(wav.channels[0]!)).toEqual(positions);
  });

  it('sums overlapping placements, applies gain and clips at the edges', async () => {
    const seg = new Float32Array(10000).map((_, i) => ((i % 100) - 50) / 200);
    const placements: Placement[] = [
      { atFrame: -300, audio: [seg] },
      { atFrame: 5000, audio: [seg], gain: 0.5 },
      { atFrame: 9000, audio: [seg, seg.map((v) => -v)] },
      { atFrame: 19990, audio: [seg] },
    ];
    const spec = { sampleRate: 8000, channels: 2, frames: 20000 };
    const mem = renderTimelineBuffer(spec, placements);
    // Reference, sample by sample.
    for (const c of [0, 1]) {
      const expected = new Float32Array(20000);
      for (const p of placements) {
        const src = p.audio as Float32Array[];
        const s = src.length === 1 ? src[0]! : src[c]!;
        for (let i = 0; i < s.length; i++) {
          const t = p.atFrame + i;
          if (t >= 0 && t < 20000) expected[t]! += s[i]! * (p.gain ?? 1);
        }
      }
      expect(mem[c]).toEqual(expected);
    }
    const out = tmp.file('overlap.wav');
    await renderTimeline(out, { ...spec, windowFrames: 777 }, placements);
    const wav = await readWav(out);
    expect(wav.channels[0]).toEqual(mem[0]);
    expect(wav.channels[1]).toEqual(mem[1]);
  });

  it('averages stereo into a mono timeline', () => {
    const mono = renderTimelineBuffer({ channels: 1, frames: 4 }, [{ atFrame: 1, audio: [new Float32Array([0.5, 0.5]), new Float32Array([0.25, -0.5])] }]);
    expect(Array.from(mono[0]!)).toEqual([0, 0.375, 0, 0]);
  });

  it('streams a long placement from a WavReader', async () => {
    const bed = new Float32Array(50000).map((_, i) => Math.sin(i / 10) * 0.25);
    await writeWav(tmp.file('bed.wav'), { sampleRate: 16000, channels: [bed] }, { format: 'float32' });
    const reader = await WavReader.open(tmp.file('bed.wav'));
    try {
      const out = tmp.file('bed-out.wav');
      await renderTimeline(out, { sampleRate: 16000, channels: 1, frames: 60000, windowFrames: 1000 }, [
        { atFrame: 2500, audio: reader, gain: 2 },
        { atFrame: 30000, audio: click() },
      ]);
      const got = (await readWav(out)).channels[0]!;
      const expected = new Float32Array(60000);
      for (let i = 0; i < bed.length && i + 2500 < 60000; i++) expected[i + 2500] = bed[i]! * 2;
      expected[30000]! += 0.5;
      expect(got).toEqual(expected);
    } finally {
      await reader.close();
    }
  });

  it('writes pcm16 when asked and reports progress', async () => {
    const seen: number[] = [];
    await renderTimeline(tmp.file('p16.wav'), { sampleRate: 16000, channels: 1, frames: 16000, format: 'pcm16', windowFrames: 4000 }, [{ atFrame: 8000, audio: click(1, 0.25) }], {
      onProgress: (p) => seen.push(p.fraction),
    });
    const wav = await readWav(tmp.file('p16.wav'));
    expect(wav.format).toBe('pcm16');
    expect(nonZero(wav.channels[0]!)).toEqual([8000]);
    expect(seen).toEqual([0, 0.25, 0.5, 0.75, 1]);
  });

  it('rejects fractional offsets and in-memory rendering of sources', async () => {
    expect(() => renderTimelineBuffer({ channels: 1, frames: 10 }, [{ atFrame: 1.5, audio: click() }])).toThrow(DubError);
    const reader = await WavReader.open(tmp.file('bed.wav'));
    expect(() => renderTimelineBuffer({ channels: 1, frames: 10 }, [{ atFrame: 0, audio: reader }])).toThrow(DubError);
    await expect(renderTimeline(tmp.file('x.wav'), { sampleRate: 8000, channels: 1, frames: 10 }, [{ atFrame: 0, audio: reader }])).rejects.toThrow(/sample rate/);
    await reader.close();
  });

  it('stops on abort', async () => {
    const ac = new AbortController();
    ac.abort();
    await expect(renderTimeline(tmp.file('abort.wav'), { sampleRate: 8000, channels: 1, frames: 100000 }, [], { signal: ac.signal })).rejects.toMatchObject({ code: 'aborted' });
  });
});
