import { describe, expect, it } from 'vitest';
import { mixUpdateDecision } from './index.js';

const state = { background: 'bg/a.wav', duration: 12.5, hops: 'mix/hops.f64', mix: 'mix/mix.wav' };

describe('mixUpdateDecision', () => {
  it('updates from a previous mix of the same background and duration with its hop energies', () => {
    const d = mixUpdateDecision({ mixState: state }, { background: 'bg/a.wav', duration: 12.5 });
    expect(d).toEqual({ update: true, state });
  });

  it('says why not: no previous generation, no mix state, another background, length or no hops', () => {
    const now = { background: 'bg/a.wav', duration: 12.5 };
    expect(mixUpdateDecision(undefined, now)).toEqual({ update: false, reason: 'no previous generation' });
    expect(mixUpdateDecision({}, now)).toEqual({ update: false, reason: 'the previous generation left no mix state' });
    const other = { update: false, reason: 'the previous mix had another background or length' };
    expect(mixUpdateDecision({ mixState: { ...state, background: 'bg/b.wav' } }, now)).toEqual(other);
    expect(mixUpdateDecision({ mixState: { ...state, duration: 12.6 } }, now)).toEqual(other);
    expect(mixUpdateDecision({ mixState: { ...state, hops: null } }, now)).toEqual(other);
    expect(mixUpdateDecision({ mixState: { ...state, background: null } }, now)).toEqual(other);
  });
});
