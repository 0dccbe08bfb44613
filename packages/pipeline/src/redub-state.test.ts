import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { blobKeys, FsBlobStore, type GenerateMode } from '@dub/core';
import { collectRedubState, markGenerationRunning, readRedubState, RUNNING_TTL_MS, writeRedubState, type RedubState } from './redub-state.js';

const ASSET = 'ast_gc';

describe('re-dub state lifetime and chunk collection', () => {
  let dir: string;
  let store: FsBlobStore;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-redub-state-'));
    store = new FsBlobStore(dir);
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const audioKey = (h: string) => blobKeys.artifact(ASSET, 'audio-chunk', h, 'chunk.adts');
  const lipsKey = (h: string) => blobKeys.artifact(ASSET, 'lips-chunk', h, 'chunk.mp4');
  const state = (version: string, generation: number, mode: GenerateMode, aac: string[] | null, lips: string[] | null): RedubState => ({
    v: 1,
    version_id: version,
    generation,
    mode,
    created_at: new Date().toISOString(),
    voice_over: false,
    normalization: { target_lufs: -16, premix_lufs: -20, gain_db: 4, exact_gain_db: 4, tolerance_db: 0.5, kept_from_generation: null },
    mix: { mix: `assets/${ASSET}/artifacts/mix-x/mix.wav`, speech: 's', gainDb: 4, hops: null, background: null, duration: 10 },
    aac_chunks: aac,
    lips_chunks: lips,
  });
  /** Chunk blobs of every hash named, and the states. */
  async function seed(states: RedubState[], audio: string[], lips: string[]): Promise<void> {
    for (const h of audio) await store.put(audioKey(h), `aac ${h}`);
    for (const h of lips) await store.put(lipsKey(h), `mp4 ${h}`);
    for (const s of states) await writeRedubState(store, ASSET, s);
  }
  const present = async (keys: string[]) => Promise.all(keys.map((k) => store.has(k)));

  it('keeps each version\'s latest state per mode and the chunks those name; collects superseded states and unreferenced chunks', async () => {
    await seed(
      [
        state('ver_a', 1, 'no_lips', ['a1', 'shared'], []),
        state('ver_a', 2, 'no_lips', ['a2', 'shared'], []),
        state('ver_a', 3, 'with_lips', ['a3'], ['l3', 'l3b']),
        state('ver_b', 1, 'no_lips', ['b1'], []),
      ],
      ['a1', 'shared', 'a2', 'a3', 'b1', 'orphan'],
      ['l1', 'l3', 'l3b'],
    );
    const r = await collectRedubState(store, ASSET, { self: { versionId: 'ver_a', generation: 3 } });
    expect(r.states).toEqual({ kept: 3, removed: 1 });
    expect(r.audio).toEqual({ kept: 4, removed: 2 });
    expect(r.lips).toEqual({ kept: 2, removed: 1 });
    // generation 1 of ver_a is superseded by generation 2 (same mode); 3 (with_lips) and ver_b's stay
    expect(await readRedubState(store, ASSET, 'ver_a', 1)).toBeUndefined();
    for (const [v, g] of [['ver_a', 2], ['ver_a', 3], ['ver_b', 1]] as const) expect((await readRedubState(store, ASSET, v, g))?.generation).toBe(g);
    expect(await present(['a1', 'orphan'].map(audioKey))).toEqual([false, false]);
    expect(await present(['shared', 'a2', 'a3', 'b1'].map(audioKey))).toEqual([true, true, true, true]);
    expect(await present(['l1', 'l3', 'l3b'].map(lipsKey))).toEqual([false, true, true]);
    // a second collection finds nothing more to remove
    expect(await collectRedubState(store, ASSET)).toMatchObject({ states: { kept: 3, removed: 0 }, audio: { kept: 4, removed: 0 }, lips: { kept: 2, removed: 0 } });
  });

  it('collects no chunk while another generation of the asset runs; a stale running mark is removed and does not block', async () => {
    await seed([state('ver_a', 1, 'no_lips', ['a1'], []), state('ver_a', 2, 'no_lips', ['a2'], [])], ['a1', 'a2', 'orphan'], ['l0']);
    const done = await markGenerationRunning(store, ASSET, 'ver_b', 4);
    const busy = await collectRedubState(store, ASSET, { self: { versionId: 'ver_a', generation: 2 } });
    // states are still pruned (the running one writes a newer state, never reads an older one of another version)
    expect(busy.states).toEqual({ kept: 1, removed: 1 });
    expect(busy.audio).toMatchObject({ removed: 0, skipped: expect.stringContaining('ver_b generation 4') });
    expect(busy.lips).toMatchObject({ removed: 0, skipped: expect.stringContaining('in progress') });
    expect(await present(['a1', 'a2', 'orphan'].map(audioKey))).toEqual([true, true, true]);
    // its own mark does not block the collecting generation
    const own = await markGenerationRunning(store, ASSET, 'ver_a', 2);
    await done();
    expect((await collectRedubState(store, ASSET, { self: { versionId: 'ver_a', generation: 2 } })).audio).toEqual({ kept: 1, removed: 2 });
    await own();
    // a mark older than the TTL is a crashed run: removed, and the collection goes on
    const t0 = Date.now();
    await markGenerationRunning(store, ASSET, 'ver_c', 1, () => t0 - RUNNING_TTL_MS - 1000);
    await store.put(audioKey('orphan2'), 'x');
    const r = await collectRedubState(store, ASSET);
    expect(r.staleRunning).toBe(1);
    expect(r.audio).toEqual({ kept: 1, removed: 1 });
    expect(await store.has(blobKeys.redubRunning(ASSET, 'ver_c', 1))).toBe(false);
  });

  it('leaves a kind of chunk alone when a kept state does not know its references, and everything when a state cannot be read', async () => {
    await seed([state('ver_a', 1, 'with_lips', ['a1'], null)], ['a1', 'orphan'], ['l1']);
    const r = await collectRedubState(store, ASSET);
    expect(r.audio).toEqual({ kept: 1, removed: 1 });
    expect(r.lips).toMatchObject({ kept: 1, removed: 0, skipped: expect.stringContaining('lips chunks of ver_a generation 1 are not known') });
    await store.put(blobKeys.redubState(ASSET, 'ver_b', 1), '{ not json');
    await store.put(audioKey('orphan'), 'x');
    const bad = await collectRedubState(store, ASSET);
    expect(bad.audio).toMatchObject({ removed: 0, skipped: expect.stringContaining('cannot be read') });
    expect(await store.has(audioKey('orphan'))).toBe(true);
    // the unreadable state is kept (not ours to judge), and counted
    expect(bad.states.kept).toBe(2);
  });

  it("the collecting generation's own state is kept even where a higher generation's state of its mode is there (a copied store)", async () => {
    await seed([state('ver_a', 9, 'no_lips', ['old'], []), state('ver_a', 1, 'no_lips', ['new'], [])], ['old', 'new'], []);
    const r = await collectRedubState(store, ASSET, { self: { versionId: 'ver_a', generation: 1 } });
    expect(r.states).toEqual({ kept: 1, removed: 1 });
    expect(await readRedubState(store, ASSET, 'ver_a', 9)).toBeUndefined();
    expect(await present([audioKey('new'), audioKey('old')])).toEqual([true, false]);
  });

  it('an asset without re-dub state or chunks: nothing to do', async () => {
    expect(await collectRedubState(store, ASSET)).toEqual({ states: { kept: 0, removed: 0 }, audio: { kept: 0, removed: 0 }, lips: { kept: 0, removed: 0 }, staleRunning: 0 });
  });
});
