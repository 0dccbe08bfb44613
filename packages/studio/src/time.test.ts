import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatTime, parseTime } from './time.js';

describe('formatTime', () => {
  it('writes m:ss.mmm below an hour and h:mm:ss.mmm from an hour', () => {
    expect(formatTime(0)).toBe('0:00.000');
    expect(formatTime(4.5)).toBe('0:04.500');
    expect(formatTime(64.25)).toBe('1:04.250');
    expect(formatTime(599.9999)).toBe('10:00.000');
    expect(formatTime(3600)).toBe('1:00:00.000');
    expect(formatTime(3723.042)).toBe('1:02:03.042');
  });
  it('rounds to the millisecond and marks what is not a time', () => {
    expect(formatTime(1.0004)).toBe('0:01.000');
    expect(formatTime(1.0006)).toBe('0:01.001');
    expect(formatTime(-2)).toBe('-0:02.000');
    expect(formatTime(Number.NaN)).toBe('--:--.---');
  });
});

describe('parseTime', () => {
  it('reads seconds, m:ss, h:mm:ss and the SRT form', () => {
    expect(parseTime('4')).toEqual({ ok: true, seconds: 4 });
    expect(parseTime(' 4.5 ')).toEqual({ ok: true, seconds: 4.5 });
    expect(parseTime('75.25')).toEqual({ ok: true, seconds: 75.25 });
    expect(parseTime('1:04.25')).toEqual({ ok: true, seconds: 64.25 });
    expect(parseTime('0:04,5')).toEqual({ ok: true, seconds: 4.5 });
    expect(parseTime('1:02:03.042')).toEqual({ ok: true, seconds: 3723.042 });
    expect(parseTime('00:00:04,500')).toEqual({ ok: true, seconds: 4.5 });
    expect(parseTime('90:00')).toEqual({ ok: true, seconds: 5400 });
    expect(parseTime('0.12345')).toEqual({ ok: true, seconds: 0.123 });
  });
  it('refuses what is not a time, with a reason', () => {
    for (const bad of ['', '  ', 'abc', '1:2:3:4', '-1', '1:60', '1:75.5', '1:60:00', '1.2.3', '1:', ':5', '4s', '1e3']) {
      const r = parseTime(bad);
      expect(r.ok, bad).toBe(false);
      if (!r.ok) expect(r.error.length).toBeGreaterThan(5);
    }
    expect(parseTime('1:60')).toMatchObject({ error: expect.stringMatching(/seconds must be below 60/) });
    expect(parseTime('-1')).toMatchObject({ error: expect.stringMatching(/negative/) });
  });
  it('reads back what formatTime writes (to the millisecond)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 30 * 3600 * 1000 }), (ms) => {
        const r = parseTime(formatTime(ms / 1000));
        expect(r).toEqual({ ok: true, seconds: ms / 1000 });
      }),
    );
  });
});
