import { describe, expect, it } from 'vitest';
import { KeyRing, RateLimiter } from './auth.js';

describe('KeyRing', () => {
  const ring = new KeyRing([
    { key: 'alpha', org: 'o1' },
    { key: 'beta', org: 'o2' },
  ]);
  it('maps bearer keys to organizations', () => {
    expect(ring.authenticate('Bearer alpha')?.org).toBe('o1');
    expect(ring.authenticate('bearer beta')?.org).toBe('o2');
    expect(ring.authenticate('Bearer alph')).toBeUndefined();
    expect(ring.authenticate('Bearer alphaa')).toBeUndefined();
    expect(ring.authenticate('alpha')).toBeUndefined();
    expect(ring.authenticate(undefined)).toBeUndefined();
    expect(ring.authenticate('Bearer ')).toBeUndefined();
  });
  it('gives a key id that is not the key', () => {
    const p = ring.authenticate('Bearer alpha')!;
    expect(p.keyId).toMatch(/^[0-9a-f]{12}$/);
    expect(p.keyId).not.toContain('alpha');
    expect(ring.authenticate('Bearer beta')!.keyId).not.toBe(p.keyId);
  });
});

describe('RateLimiter', () => {
  it('allows N per fixed minute window per id, then tells the seconds to wait', () => {
    let now = 60_000 * 100 + 15_000;
    const rl = new RateLimiter(3, () => now);
    expect([rl.hit('a'), rl.hit('a'), rl.hit('a')]).toEqual([undefined, undefined, undefined]);
    expect(rl.hit('a')).toBe(45);
    expect(rl.hit('b')).toBeUndefined();
    now += 45_000;
    expect(rl.hit('a')).toBeUndefined();
  });
  it('is off at 0', () => {
    const rl = new RateLimiter(0);
    for (let i = 0; i < 100; i++) expect(rl.hit('a')).toBeUndefined();
  });
});
