import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { defineEngineRegistry, engineLabel, engineRecordOf, modelSupport, type EngineEntry, type EngineHost } from './engine-registry.js';
import { EngineUnavailableError, ModelMissingError, ValidationError } from './errors.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dub-registry-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A stage with a model engine (best, needs big.onnx, speaks en and es), a tool engine that speaks en only, and an offline fallback. */
function registry() {
  return defineEngineRegistry<string, { tag: string }, EngineHost>({
    stage: 'demo',
    envVar: 'DUB_DEMO_ENGINE',
    entries: [
      {
        id: 'neural',
        // named after its model file, like a Piper voice
        label: ([file]) => (file ? `neural ${path.basename(file, '.onnx')}` : 'neural'),
        installHint: 'npx dub models fetch neural-model',
        supports: (locale, env) =>
          locale === 'en-US' || locale === 'es-ES'
            ? modelSupport('neural-model', ['big.onnx', 'big.json'], env.models, { ok: 'the neural model is installed', missing: 'no neural model here (npx dub models fetch neural-model)' })
            : { ok: false, reason: `the neural model does not speak ${locale}` },
        create: async (o) => `neural:${o.tag}`,
      },
      {
        id: 'tool',
        label: 'demo tool',
        installHint: 'apt-get install demo-tool',
        supports: (locale) => (locale === 'en-US' ? { ok: true, reason: 'the tool speaks en-US' } : { ok: false, reason: `the tool does not speak ${locale}` }),
        create: async (o) => `tool:${o.tag}`,
      },
      { id: 'offline', label: 'offline demo', fallbackNote: 'classical, no weights', supports: () => ({ ok: true }), create: async (o) => `offline:${o.tag}` },
    ],
  });
}

function install(): { sha: string; size: number } {
  fs.mkdirSync(path.join(dir, 'neural-model'), { recursive: true });
  const bytes = Buffer.from('not really onnx, but bytes with a hash');
  fs.writeFileSync(path.join(dir, 'neural-model', 'big.onnx'), bytes);
  fs.writeFileSync(path.join(dir, 'neural-model', 'big.json'), '{}');
  return { sha: createHash('sha256').update(bytes).digest('hex'), size: bytes.length };
}

describe('EngineRegistry', () => {
  const env: EngineHost = { models: { modelsDir: dir, manifest: { models: [] } } };

  it('auto falls back to the next engine that supports the locale, with the reason the better one was passed over', async () => {
    const r = registry();
    const en = await r.resolve('auto', 'en-US', env);
    expect(en).toMatchObject({ id: 'tool', selected: 'auto', reason: 'auto: no neural model here (npx dub models fetch neural-model)', models: [] });
    expect(en.record).toEqual({ id: 'tool', label: 'demo tool', selected: 'auto', reason: 'auto: no neural model here (npx dub models fetch neural-model)' });
    const fr = await r.resolve('auto', 'fr-FR', env);
    expect(fr.record).toEqual({ id: 'offline', label: 'offline demo', selected: 'auto', reason: 'auto: the neural model does not speak fr-FR (classical, no weights)' });
  });

  it('an explicit engine whose model is missing throws the resolver error naming dub models fetch; one that cannot run otherwise throws engine_unavailable with its install hint', async () => {
    const r = registry();
    const e = await r.resolve('neural', 'en-US', env).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ModelMissingError);
    expect((e as ModelMissingError).code).toBe('model_missing');
    expect((e as Error).message).toMatch(/npx dub models fetch neural-model/);
    const t = await r.resolve('tool', 'es-ES', env).catch((x: unknown) => x);
    expect(t).toBeInstanceOf(EngineUnavailableError);
    expect(t).toMatchObject({ code: 'engine_unavailable', message: 'DUB_DEMO_ENGINE=tool: the tool does not speak es-ES; apt-get install demo-tool' });
    await expect(r.resolve('nope', 'en-US', env)).rejects.toBeInstanceOf(ValidationError);
    await expect(r.resolve('nope', 'en-US', env)).rejects.toThrow('DUB_DEMO_ENGINE="nope" is not an engine: auto, neural, tool, offline');
  });

  it('once the model is installed auto picks it, and the record names file, sha256 and size (provider added by the stage)', async () => {
    const { sha, size } = install();
    const r = registry();
    const a = await r.resolve('auto', 'es-ES', env);
    expect(a.id).toBe('neural');
    expect(a.record).toEqual({
      id: 'neural', label: 'neural big', model: 'big.onnx', sha256: sha, size, selected: 'auto', reason: 'auto: the neural model is installed',
      files: [{ name: 'big.onnx', sha256: sha, size }, { name: 'big.json', sha256: createHash('sha256').update('{}').digest('hex'), size: 2 }],
    });
    expect(engineRecordOf(a, 'cpu')).toMatchObject({ id: 'neural', label: 'neural big', provider: 'cpu' });
    const x = await r.resolve('neural', 'en-US', env);
    expect(x.record).toMatchObject({ id: 'neural', label: 'neural big', selected: 'explicit', reason: 'DUB_DEMO_ENGINE=neural', sha256: sha });
    expect(await x.entry.create({ tag: 'a' }, env)).toBe('neural:a');
    expect(await r.create('offline', { tag: 'b' }, env)).toBe('offline:b');
    // an engine without weights gets no provider
    expect(engineRecordOf(await r.resolve('offline', 'en-US', env), 'cuda')).toEqual({ id: 'offline', label: 'offline demo', selected: 'explicit', reason: 'DUB_DEMO_ENGINE=offline' });
    // the label of an entry without resolving it: a fixed one, or the one its function gives without model files
    expect(engineLabel(r.get('tool'))).toBe('demo tool');
    expect(engineLabel(r.get('neural'))).toBe('neural');
    expect(engineLabel(r.get('neural'), [path.join(dir, 'neural-model', 'huge.onnx')])).toBe('neural huge');
  });

  it('auto tries only the preference list: an engine left out runs only when named', async () => {
    const r = defineEngineRegistry<string, void>({
      stage: 's', envVar: 'DUB_S_ENGINE', preference: ['b'],
      entries: [{ id: 'a', label: 'A', supports: () => ({ ok: true, reason: 'a runs' }), create: async () => 'a' }, { id: 'b', label: 'B', supports: () => ({ ok: true, reason: 'b runs' }), create: async () => 'b' }],
    });
    expect(r.ids).toEqual(['a', 'b']);
    expect((await r.resolve('auto', 'en-US', env)).record).toEqual({ id: 'b', label: 'B', selected: 'auto', reason: 'auto: b runs' });
    expect((await r.resolve('a', 'en-US', env)).id).toBe('a');
    expect(() => defineEngineRegistry({ stage: 's', envVar: 'X', preference: ['z'], entries: [{ id: 'a', label: 'A', supports: () => ({ ok: true }), create: async () => 1 }] })).toThrow(/unknown engine z/);
  });

  it('an engine that runs only as a fallback is taken by auto where no engine after it runs', async () => {
    const make = (bRuns: boolean) =>
      defineEngineRegistry<string, void>({
        stage: 's', envVar: 'DUB_S_ENGINE',
        entries: [
          { id: 'a', label: 'A', supports: () => ({ ok: true, fallback: true, reason: 'a runs, the long way' }), create: async () => 'a' },
          { id: 'b', label: 'B', supports: () => (bRuns ? { ok: true, reason: 'b runs' } : { ok: false, reason: 'b is not installed' }), create: async () => 'b' },
        ],
      });
    expect((await make(true).resolve('auto', 'en-US', env)).record).toEqual({ id: 'b', label: 'B', selected: 'auto', reason: 'auto: b runs' });
    expect((await make(false).resolve('auto', 'en-US', env)).record).toEqual({ id: 'a', label: 'A', selected: 'auto', reason: 'auto: a runs, the long way' });
    expect((await make(true).resolve('a', 'en-US', env)).id).toBe('a');
  });

  it('an engine auto passes over on this host is said in a note; a silent one (not installed, optional) is not the reason; a label its support gives goes in the record', async () => {
    const r = defineEngineRegistry<string, void>({
      stage: 's', envVar: 'DUB_S_ENGINE',
      entries: [
        { id: 'gpu', label: 'GPU engine', supports: (l) => (l === 'en-US' ? { ok: true, auto: false, note: 'gpu is installed but auto uses it only on CUDA', label: 'GPU engine large' } : { ok: false, silent: true, reason: 'gpu is not installed' }), create: async () => 'gpu' },
        { id: 'model', label: 'model engine', supports: () => ({ ok: false, reason: 'no model here (npx dub models fetch m)' }), create: async () => 'model' },
        { id: 'offline', label: 'offline demo', supports: () => ({ ok: true }), create: async () => 'offline' },
      ],
    });
    expect((await r.resolve('auto', 'en-US', env)).reason).toBe('auto: no model here (npx dub models fetch m); gpu is installed but auto uses it only on CUDA');
    expect((await r.resolve('auto', 'fr-FR', env)).reason).toBe('auto: no model here (npx dub models fetch m)');
    expect((await r.resolve('gpu', 'en-US', env)).record).toEqual({ id: 'gpu', label: 'GPU engine large', selected: 'explicit', reason: 'DUB_S_ENGINE=gpu' });
    await expect(r.resolve('gpu', 'fr-FR', env)).rejects.toMatchObject({ code: 'engine_unavailable', message: 'DUB_S_ENGINE=gpu: gpu is not installed' });
  });

  it('refuses duplicate ids and says why when no engine runs the locale', async () => {
    expect(() => defineEngineRegistry({ stage: 's', envVar: 'X', entries: [{ id: 'a', label: 'A', supports: () => ({ ok: true }), create: async () => 1 }, { id: 'a', label: 'A', supports: () => ({ ok: true }), create: async () => 2 }] })).toThrow(/duplicate/);
    const none = defineEngineRegistry<number, void>({ stage: 'asr', envVar: 'DUB_ASR_ENGINE', entries: [{ id: 'a', label: 'A', supports: (l) => ({ ok: false, reason: `a does not speak ${l}` }), create: async () => 1 }] });
    await expect(none.resolve('auto', 'ja-JP', env)).rejects.toMatchObject({ code: 'engine_unavailable', message: 'asr: no engine here runs ja-JP (a: a does not speak ja-JP)' });
  });
});

describe('a registry whose entries say more than EngineEntry', () => {
  it('keeps each entry whole: entries, get and resolve hand back the stage’s own fields', async () => {
    type KindEntry = EngineEntry<string, { tag: string }, EngineHost> & { readonly kind: 'a' | 'b' };
    const r = defineEngineRegistry<string, { tag: string }, EngineHost, KindEntry>({
      stage: 'kinds',
      envVar: 'DUB_KINDS_ENGINE',
      entries: [
        { id: 'first', label: 'first', kind: 'a', weights: { none: 'none' }, supports: () => ({ ok: false, reason: 'not here' }), create: async (o) => `first:${o.tag}` },
        { id: 'second', label: 'second', kind: 'b', weights: { none: 'none' }, supports: () => ({ ok: true }), create: async (o) => `second:${o.tag}` },
      ],
    });
    expect(r.entries.map((e) => [e.id, e.kind])).toEqual([['first', 'a'], ['second', 'b']]);
    expect(r.get('second').kind).toBe('b');
    const chosen = await r.resolve('auto', undefined, { models: { modelsDir: dir, manifest: { models: [] } } });
    expect(chosen.id).toBe('second');
    expect((chosen.entry as KindEntry).kind).toBe('b');
    expect(() => r.get('third')).toThrow('DUB_KINDS_ENGINE="third" is not an engine: auto, first, second');
  });
});
