/**
 * One registry shape for every stage that has engines (separation, voice activity, speech
 * recognition, speaker embedding, translation, speech synthesis, voice conversion, lips): a
 * list of entries `{ id, label, supports(locale, env), create(options, env), installHint }` with the
 * order `auto` tries them in (best first), and one `resolve(choice, locale, env)` that turns `auto` or an explicit id into the
 * engine that runs, its model files' identity and the reason, as an EngineRecord.
 *
 * - `auto` picks the first entry that supports the locale here (its model files resolve, its tool
 *   or service is present); the reason says why, or why the better ones were passed over.
 * - An explicit id that cannot run throws: the resolver's ModelMissingError (naming
 *   `npx dub models fetch <id>`) when a model file is missing, else EngineUnavailableError with
 *   the entry's reason and install hint. It is never replaced by another engine.
 * - An unknown id is a ValidationError naming the known ones.
 * - Every entry says what its weights are (`weights`): manifest entries whose `terms` the record
 *   carries (licence id, commercial flag), a service, or none. Under the model policy `commercial`
 *   (DUB_MODEL_POLICY, `--model-policy`) `auto` passes over weights whose terms are not `yes` and
 *   says so in the reason, and an explicit choice of one throws ModelPolicyError (before its
 *   support is looked at) naming the licence and the engines the policy leaves.
 */
import { modelIdentity, type EngineRecord, type ModelIdentity } from './engines.js';
import { AbortedError, DubError, EngineUnavailableError, isDubError, ValidationError } from './errors.js';
import { licenseId, ModelPolicyError, modelPolicyFromEnv, policyAllows, type ModelPolicy, type ModelTerms } from './licence.js';
import { resolveModelFile, termsOf, type ResolveOptions } from './models.js';

/**
 * What every stage's engine is, whatever it does (separates, detects speech, transcribes, embeds
 * speakers, translates, speaks, converts a voice, moves lips): the registry id it was created as,
 * the name its record gives it, and `dispose()`, which releases what it holds (ONNX sessions,
 * child processes; nothing for engines that hold nothing). Each stage's engine interface extends
 * it with what the stage asks of it. Model: livekit agents-js `stt.STT` (`label`, `close()`).
 */
export interface Engine {
  /** The registry id it was created as ("htdemucs", "silero", "whisper", "apertium", ...). */
  readonly id: string;
  /** What its record calls it ("HTDemucs v4", "Whisper base", "Piper es_ES-davefx-medium", ...). */
  readonly label: string;
  /** Release what it holds; the engine is not used after. Safe to call twice. */
  dispose(): Promise<void>;
}

/** What `e` lacks of the Engine contract, one line each (empty: nothing); the stages' conformance kits check it. */
export function engineContractProblems(e: unknown): string[] {
  const o = (e ?? {}) as { id?: unknown; label?: unknown; dispose?: unknown };
  const out: string[] = [];
  if (typeof o.id !== 'string' || !o.id) out.push('id is not a non-empty string');
  if (typeof o.label !== 'string' || !o.label.trim()) out.push('label is not a non-empty string');
  if (typeof o.dispose !== 'function') out.push('dispose() is missing');
  return out;
}

/**
 * For the conformance kits: what is wrong with how `run` (a call made with a signal that has
 * fired) ends: undefined when it rejects with AbortedError (or a DubError coded `aborted`), else
 * the problem (`what` names the call: "synthesis did not stop").
 */
export async function abortProblem(run: () => Promise<unknown>, what: string): Promise<string | undefined> {
  try {
    await run();
  } catch (e) {
    return e instanceof AbortedError || (isDubError(e) && e.code === 'aborted') ? undefined : `expected AbortedError, got ${String(e)}`;
  }
  return `${what} did not stop`;
}

/** The one "unknown engine" error: `name` (an environment variable or option) holds `raw`, which is none of `ids` (nor `auto`, where `auto` is false it is not offered). */
export function unknownEngineError(name: string, raw: string, ids: readonly string[], o: { auto?: boolean } = {}): ValidationError {
  return new ValidationError(`${name}="${raw}" is not an engine: ${o.auto === false ? '' : 'auto, '}${ids.join(', ')}`, { field: name });
}

/**
 * The engine choice `raw` names: `auto` when unset, blank or `auto`, else one of `ids` (a stage's
 * `*_ENGINE_IDS` from its `engine-ids.ts`); anything else is `unknownEngineError`.
 */
export function engineChoiceOf<T extends string>(name: string, raw: string | undefined, ids: readonly T[]): 'auto' | T {
  const v = raw?.trim();
  if (!v || v === 'auto') return 'auto';
  if (!(ids as readonly string[]).includes(v)) throw unknownEngineError(name, v, ids);
  return v as T;
}

/** What every registry's `supports` and `create` receive at least: where model files are looked up. */
export interface EngineHost {
  models: ResolveOptions;
  /** Which weights may run (default: DUB_MODEL_POLICY, unset `any`). */
  policy?: ModelPolicy;
}

/**
 * What an engine runs, for its licence:
 * - `models`: the manifest entries (models/manifest.json `models`, `derived` or `system`) whose
 *   terms cover its weights; `pick` says which one runs for a locale and host (default the first).
 * - `service`: a remote service the operator configures (no weights here: its terms are the
 *   operator's contract with it).
 * - `none`: no trained weights (what it is instead, e.g. "an energy threshold").
 */
export type EngineWeights<Env extends EngineHost = EngineHost> =
  | { readonly models: readonly string[]; pick?(locale: string | undefined, env: Env): string | undefined }
  | { readonly service: string }
  | { readonly none: string };

/** The terms an engine's weights run under here: null for engines without weights (services included). */
export interface EngineTerms {
  /** The manifest entry whose terms apply. */
  id: string;
  /** Its terms (undefined: the entry has none, which the manifest test fails). */
  terms: ModelTerms | undefined;
}

/** Whether an engine can run a locale here. */
export type EngineSupport =
  | {
      ok: true;
      /** Why it runs when picked first by `auto` (e.g. "the Wav2Lip model is installed"). */
      reason?: string;
      /** Absolute paths of the model files it loads, first the main one (for the record and cache keys). */
      files?: string[];
      /** The record's label of what runs here, where the entry's label cannot tell it from the model files (e.g. "Whisper small"). */
      label?: string;
      /** false: it runs when named, but `auto` passes over it here (e.g. Chatterbox on a CPU host). */
      auto?: boolean;
      /** It runs, but `auto` takes it only where no engine after it in the preference runs (apertium through Spanish, after M2M100). */
      fallback?: boolean;
      /** Said after the reason `auto` gives when it passes over this engine. */
      note?: string;
    }
  | {
      ok: false;
      /** Why not (e.g. "no Piper voice here (npx dub models fetch piper-es_ES-davefx-medium)"). */
      reason: string;
      /** The error an explicit choice of this engine throws (a ModelMissingError from the resolver). */
      error?: DubError;
      /** `auto` passes over it without giving this as its reason (an optional engine that is not installed). */
      silent?: boolean;
      /** What makes it run here, where the engine knows better than its installHint (apertium: the Debian packages of the pair). */
      fix?: string;
      /** Said after the reason `auto` gives when it passes over this engine. */
      note?: string;
    };

/**
 * The human-readable name of an engine for its record: a fixed name, or one made from the absolute
 * paths of the model files it loads, the main one first (e.g. the Piper voice's file name).
 */
export type EngineLabel = string | ((files: readonly string[]) => string);

export interface EngineEntry<E, O, Env extends EngineHost = EngineHost> {
  readonly id: string;
  /** What the record calls it ("Silero VAD v5", "energy VAD", "Piper <voice>", ...). */
  readonly label: EngineLabel;
  /** Whether this engine can run `locale` (undefined: the stage has no locale) on this host. */
  supports(locale: string | undefined, env: Env): EngineSupport | Promise<EngineSupport>;
  /** A new engine instance (imported lazily: creating the registry loads no engine). */
  create(options: O, env: Env): Promise<E>;
  /** The command or step that makes it runnable (e.g. "npx dub models fetch wav2lip-gan-96"); none for engines that always run. */
  readonly installHint?: string;
  /** Said after the reason when `auto` falls back to this engine (e.g. "classical mouth warp"). */
  readonly fallbackNote?: string;
  /** What its weights are, for their licence (models/manifest.json terms), or that it has none. */
  readonly weights: EngineWeights<Env>;
}

/** The engine a stage runs, why, and its model files' identity. */
export interface ResolvedEngine<E, O, Env extends EngineHost = EngineHost> {
  id: string;
  entry: EngineEntry<E, O, Env>;
  selected: 'auto' | 'explicit';
  reason: string;
  /** Identity (name, size, sha256) of each model file, the main one first; empty for engines without weights. */
  models: ModelIdentity[];
  /** The EngineRecord of this choice; the stage adds the provider the model ran on. */
  record: EngineRecord;
}

/**
 * A stage's registry. `Entry` is its entries' type: EngineEntry, or one that adds what the stage
 * knows of each engine (the speakers' `embedding` kind), so the entry stays the only table of it.
 */
export interface EngineRegistry<E, O, Env extends EngineHost = EngineHost, Entry extends EngineEntry<E, O, Env> = EngineEntry<E, O, Env>> {
  /** Stage name used in records and messages (tts, lips, speakers, ...). */
  readonly stage: string;
  /** Environment variable that names the engine (DUB_TTS_ENGINE, ...). */
  readonly envVar: string;
  /** Every entry, in the order the registry lists them. */
  readonly entries: readonly Entry[];
  /** Ids `auto` tries, best first (an engine left out runs only when named). */
  readonly preference: readonly string[];
  readonly ids: readonly string[];
  has(id: string): boolean;
  /** The entry, or a ValidationError naming the known ids. */
  get(id: string): Entry;
  /** `auto` or an id -> the engine that runs (throws for an explicit one that cannot run). */
  resolve(choice: string, locale: string | undefined, env: Env): Promise<ResolvedEngine<E, O, Env>>;
  /** Create engine `id` (no support check: `resolve` first where the choice matters). */
  create(id: string, options: O, env: Env): Promise<E>;
  /** The terms engine `id`'s weights run under for `locale` here; null when it has no weights. */
  termsOf(id: string, locale: string | undefined, env: Env): EngineTerms | null;
  /** Throws ModelPolicyError when the policy (env.policy, else DUB_MODEL_POLICY) refuses an explicit `choice`; `auto` never throws here. */
  checkPolicy(choice: string, locale: string | undefined, env: Env): void;
  /** The ids the policy leaves for `locale` (whether they are installed is `resolve`'s concern). */
  allowed(locale: string | undefined, env: Env): string[];
}

/** The policy of a host: its own, else DUB_MODEL_POLICY. */
export function policyOf(env: EngineHost): ModelPolicy {
  return env.policy ?? modelPolicyFromEnv();
}

/** The terms of an entry's weights for a locale here (null: no weights). */
export function entryTerms<Env extends EngineHost>(entry: { readonly weights: EngineWeights<Env> }, locale: string | undefined, env: Env): EngineTerms | null {
  const w = entry.weights as EngineWeights<Env> | undefined;
  if (!w || !('models' in w)) return null;
  const id = w.pick ? w.pick(locale, env) : w.models[0];
  if (!id) return null;
  return { id, terms: termsOf(id, env.models.manifest) };
}

/** The licence fields of a record for these terms (none for an engine without weights). */
export function recordTermsOf(t: EngineTerms | null): Pick<EngineRecord, 'model_id' | 'license' | 'commercial'> {
  if (!t) return {};
  return { model_id: t.id, ...(t.terms ? { license: licenseId(t.terms), commercial: t.terms.commercial } : {}) };
}

/** The label of an engine entry for the model files it loads (absolute paths, the main one first; none for engines without weights). */
export function engineLabel(entry: { readonly label: EngineLabel }, files: readonly string[] = []): string {
  return typeof entry.label === 'string' ? entry.label : entry.label(files);
}

/** The engine record of a resolved engine with the provider its model ran on. */
export function engineRecordOf(r: { record: EngineRecord }, provider?: 'cpu' | 'cuda'): EngineRecord {
  return provider && r.record.model ? { ...r.record, provider } : { ...r.record };
}

/**
 * Support of an engine that loads model files: ok with their absolute paths when every file of
 * `modelId` resolves, else not ok with the resolver's ModelMissingError (naming
 * `npx dub models fetch <modelId>`) and `missingReason`.
 */
export function modelSupport(modelId: string, files: readonly string[], models: ResolveOptions, reasons: { ok?: string; missing: string }): EngineSupport {
  try {
    const paths = files.map((f) => resolveModelFile(modelId, f, models));
    return { ok: true, files: paths, ...(reasons.ok ? { reason: reasons.ok } : {}) };
  } catch (e) {
    if (e instanceof DubError) return { ok: false, reason: reasons.missing, error: e };
    throw e;
  }
}

/** A manifest model an engine loads: its id and its file, or its files (the main one first). */
export type EngineModel = { readonly id: string; readonly file: string } | { readonly id: string; readonly files: readonly string[] };

/**
 * The entry of an engine that loads the files of one manifest model: it installs with
 * `npx dub models fetch <model>`, its weights are that model's (their terms), and it runs when
 * every file resolves (`modelSupport`, with `reasons`).
 */
export function modelEntry<E, O, Env extends EngineHost = EngineHost>(o: { id: string; label: EngineLabel; model: EngineModel; reasons: { ok: string; missing: string }; create: EngineEntry<E, O, Env>['create'] }): EngineEntry<E, O, Env> {
  const { id, files } = 'file' in o.model ? { id: o.model.id, files: [o.model.file] } : o.model;
  return {
    id: o.id,
    label: o.label,
    installHint: `npx dub models fetch ${id}`,
    weights: { models: [id] },
    supports: (_locale, env) => modelSupport(id, files, env.models, o.reasons),
    create: o.create,
  };
}

async function identities(files: readonly string[] | undefined): Promise<ModelIdentity[]> {
  const out: ModelIdentity[] = [];
  for (const f of files ?? []) out.push(await modelIdentity(f));
  return out;
}

function recordOf(id: string, label: string, selected: 'auto' | 'explicit', reason: string, models: ModelIdentity[], terms: EngineTerms | null, passedOver: string[] = []): EngineRecord {
  const [m] = models;
  return {
    id,
    label,
    ...(m ? { model: m.model, sha256: m.sha256, size: m.size } : {}),
    ...(models.length > 1 ? { files: models.map((x) => ({ name: x.model, sha256: x.sha256, size: x.size })) } : {}),
    ...recordTermsOf(terms),
    ...(passedOver.length ? { passed_over: passedOver } : {}),
    selected,
    reason,
  };
}

export interface EngineRegistryOptions<E, O, Env extends EngineHost, Entry extends EngineEntry<E, O, Env> = EngineEntry<E, O, Env>> {
  stage: string;
  envVar: string;
  entries: readonly Entry[];
  /** Ids `auto` tries, best first (default: every entry in order). */
  preference?: readonly string[];
  /**
   * The stage's ids from its leaf `engine-ids.ts` (what code that must not load the registry
   * reads): the entries must be exactly these, in this order, or defining the registry throws.
   */
  ids?: readonly string[];
}

/** Build a registry from its entries. */
export function defineEngineRegistry<E, O, Env extends EngineHost = EngineHost, Entry extends EngineEntry<E, O, Env> = EngineEntry<E, O, Env>>(o: EngineRegistryOptions<E, O, Env, Entry>): EngineRegistry<E, O, Env, Entry> {
  const byId = new Map(o.entries.map((e) => [e.id, e] as const));
  if (byId.size !== o.entries.length) throw new Error(`${o.stage}: duplicate engine ids`);
  const ids = o.entries.map((e) => e.id);
  if (o.ids && o.ids.join('\n') !== ids.join('\n')) throw new Error(`${o.stage}: the entries (${ids.join(', ')}) are not the ids of engine-ids.ts (${o.ids.join(', ')})`);
  const preference = o.preference ?? ids;
  for (const id of preference) if (!byId.has(id)) throw new Error(`${o.stage}: preference names an unknown engine ${id}`);
  const preferred = preference.map((id) => byId.get(id)!);
  const get = (id: string): Entry => {
    const e = byId.get(id);
    if (!e) throw unknownEngineError(o.envVar, id, ids);
    return e;
  };
  const allowedIds = (locale: string | undefined, env: Env): string[] => {
    const policy = policyOf(env);
    return o.entries.filter((e) => policyAllows(policy, entryTerms(e, locale, env)?.terms)).map((e) => e.id);
  };
  const registry: EngineRegistry<E, O, Env, Entry> = Object.freeze({
    stage: o.stage,
    envVar: o.envVar,
    entries: Object.freeze([...o.entries]),
    ids: Object.freeze(ids),
    preference: Object.freeze([...preference]),
    has: (id: string) => byId.has(id),
    get,
    create: async (id: string, options: O, env: Env) => get(id).create(options, env),
    termsOf: (id: string, locale: string | undefined, env: Env) => entryTerms(get(id), locale, env),
    allowed: (locale: string | undefined, env: Env) => allowedIds(locale, env),
    checkPolicy(choice: string, locale: string | undefined, env: Env): void {
      if (choice === 'auto') return;
      const entry = get(choice);
      const policy = policyOf(env);
      const t = entryTerms(entry, locale, env);
      if (policyAllows(policy, t?.terms)) return;
      const left = allowedIds(locale, env);
      const terms = t!.terms;
      throw new ModelPolicyError(
        `${o.envVar}=${choice}: ${engineLabel(entry)}'s weights (${t!.id}) are ${terms ? `${licenseId(terms)}, commercial use ${terms.commercial} (${terms.url})` : 'without known terms'}; the model policy "commercial" (--model-policy, DUB_MODEL_POLICY) runs only weights cleared for commercial use: ${left.length ? `choose ${left.join(' or ')} (or auto)` : 'no engine of this stage is'}, or --model-policy any`,
        { details: { stage: o.stage, engine: choice, model: t!.id, ...(terms ? { license: licenseId(terms), commercial: terms.commercial } : {}), allowed: left } },
      );
    },
    async resolve(choice: string, locale: string | undefined, env: Env): Promise<ResolvedEngine<E, O, Env>> {
      const policy = policyOf(env);
      if (choice !== 'auto') {
        const entry = get(choice);
        registry.checkPolicy(choice, locale, env);
        const s = await entry.supports(locale, env);
        if (!s.ok) {
          if (s.error) throw s.error;
          const fix = s.fix ?? entry.installHint;
          throw new EngineUnavailableError(`${o.envVar}=${choice}: ${s.reason}${fix ? `; ${fix}` : ''}`, { details: { stage: o.stage, engine: choice } });
        }
        const models = await identities(s.files);
        const reason = `${o.envVar}=${choice}`;
        const label = s.label ?? engineLabel(entry, s.files);
        return { id: entry.id, entry, selected: 'explicit', reason, models, record: recordOf(entry.id, label, 'explicit', reason, models, entryTerms(entry, locale, env)) };
      }
      const skipped: string[] = [];
      const passed: string[] = [];
      const notes: string[] = [];
      // Installed engines the policy passes over, with their licences: the reason names them.
      const refused: string[] = [];
      const refusedIds: string[] = [];
      // The first engine that runs only as a fallback: taken where no engine after it runs.
      let fallbackPick: { entry: EngineEntry<E, O, Env>; s: EngineSupport & { ok: true }; t: EngineTerms | null } | undefined;
      const pick = async (entry: EngineEntry<E, O, Env>, s: EngineSupport & { ok: true }, t: EngineTerms | null): Promise<ResolvedEngine<E, O, Env>> => {
        const fallback = entry.fallbackNote ? ` (${entry.fallbackNote})` : '';
        const why = refused.length
          ? `the model policy "commercial" passes over ${refused.join(', ')}: ${entry.fallbackNote ?? s.reason ?? `${entry.id} runs ${locale ?? 'here'}`}`
          : passed.length && !s.fallback ? `${passed[0]}${fallback}` : (s.reason ?? `${entry.id} runs ${locale ?? 'here'}`);
        const reason = `auto: ${why}${notes.map((n) => `; ${n}`).join('')}`;
        const models = await identities(s.files);
        const label = s.label ?? engineLabel(entry, s.files);
        return { id: entry.id, entry, selected: 'auto', reason, models, record: recordOf(entry.id, label, 'auto', reason, models, t, refusedIds) };
      };
      for (const entry of preferred) {
        const s = await entry.supports(locale, env);
        const t = entryTerms(entry, locale, env);
        if (s.ok && !policyAllows(policy, t?.terms)) {
          refused.push(`${entry.id} (${t!.terms ? `${licenseId(t!.terms)}, commercial use ${t!.terms.commercial}` : `${t!.id}: no known terms`})`);
          refusedIds.push(entry.id);
          skipped.push(`${entry.id}: not cleared for commercial use`);
          continue;
        }
        if (!s.ok || s.auto === false) {
          if (!s.ok) skipped.push(`${entry.id}: ${s.reason}`);
          if (!s.ok && !s.silent) passed.push(s.reason);
          if (s.note) notes.push(s.note);
          continue;
        }
        if (s.fallback) {
          fallbackPick ??= { entry, s, t };
          continue;
        }
        return pick(entry, s, t);
      }
      if (fallbackPick) return pick(fallbackPick.entry, fallbackPick.s, fallbackPick.t);
      // engines auto passes over though they run (their notes say why: e.g. espeak-ng for zh-CN) are named too
      throw new EngineUnavailableError(`${o.stage}: no engine here runs ${locale ?? 'this stage'} (${[...skipped, ...notes].join('; ')})`, { details: { stage: o.stage } });
    },
  });
  return registry;
}
