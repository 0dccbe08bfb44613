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
 */
import { modelIdentity, type EngineRecord, type ModelIdentity } from './engines.js';
import { DubError, EngineUnavailableError, ValidationError } from './errors.js';
import { resolveModelFile, type ResolveOptions } from './models.js';

/** What every registry's `supports` and `create` receive at least: where model files are looked up. */
export interface EngineHost {
  models: ResolveOptions;
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

export interface EngineRegistry<E, O, Env extends EngineHost = EngineHost> {
  /** Stage name used in records and messages (tts, lips, speakers, ...). */
  readonly stage: string;
  /** Environment variable that names the engine (DUB_TTS_ENGINE, ...). */
  readonly envVar: string;
  /** Every entry, in the order the registry lists them. */
  readonly entries: readonly EngineEntry<E, O, Env>[];
  /** Ids `auto` tries, best first (an engine left out runs only when named). */
  readonly preference: readonly string[];
  readonly ids: readonly string[];
  has(id: string): boolean;
  /** The entry, or a ValidationError naming the known ids. */
  get(id: string): EngineEntry<E, O, Env>;
  /** `auto` or an id -> the engine that runs (throws for an explicit one that cannot run). */
  resolve(choice: string, locale: string | undefined, env: Env): Promise<ResolvedEngine<E, O, Env>>;
  /** Create engine `id` (no support check: `resolve` first where the choice matters). */
  create(id: string, options: O, env: Env): Promise<E>;
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

async function identities(files: readonly string[] | undefined): Promise<ModelIdentity[]> {
  const out: ModelIdentity[] = [];
  for (const f of files ?? []) out.push(await modelIdentity(f));
  return out;
}

function recordOf(id: string, label: string, selected: 'auto' | 'explicit', reason: string, models: ModelIdentity[]): EngineRecord {
  const [m] = models;
  return {
    id,
    label,
    ...(m ? { model: m.model, sha256: m.sha256, size: m.size } : {}),
    ...(models.length > 1 ? { files: models.map((x) => ({ name: x.model, sha256: x.sha256, size: x.size })) } : {}),
    selected,
    reason,
  };
}

export interface EngineRegistryOptions<E, O, Env extends EngineHost> {
  stage: string;
  envVar: string;
  entries: readonly EngineEntry<E, O, Env>[];
  /** Ids `auto` tries, best first (default: every entry in order). */
  preference?: readonly string[];
}

/** Build a registry from its entries. */
export function defineEngineRegistry<E, O, Env extends EngineHost = EngineHost>(o: EngineRegistryOptions<E, O, Env>): EngineRegistry<E, O, Env> {
  const byId = new Map(o.entries.map((e) => [e.id, e] as const));
  if (byId.size !== o.entries.length) throw new Error(`${o.stage}: duplicate engine ids`);
  const ids = o.entries.map((e) => e.id);
  const preference = o.preference ?? ids;
  for (const id of preference) if (!byId.has(id)) throw new Error(`${o.stage}: preference names an unknown engine ${id}`);
  const preferred = preference.map((id) => byId.get(id)!);
  const get = (id: string): EngineEntry<E, O, Env> => {
    const e = byId.get(id);
    if (!e) throw new ValidationError(`${o.envVar}="${id}" is not an engine: auto, ${ids.join(', ')}`, { field: o.envVar });
    return e;
  };
  return Object.freeze({
    stage: o.stage,
    envVar: o.envVar,
    entries: Object.freeze([...o.entries]),
    ids: Object.freeze(ids),
    preference: Object.freeze([...preference]),
    has: (id: string) => byId.has(id),
    get,
    create: async (id: string, options: O, env: Env) => get(id).create(options, env),
    async resolve(choice: string, locale: string | undefined, env: Env): Promise<ResolvedEngine<E, O, Env>> {
      if (choice !== 'auto') {
        const entry = get(choice);
        const s = await entry.supports(locale, env);
        if (!s.ok) {
          if (s.error) throw s.error;
          throw new EngineUnavailableError(`${o.envVar}=${choice}: ${s.reason}${entry.installHint ? `; ${entry.installHint}` : ''}`, { details: { stage: o.stage, engine: choice } });
        }
        const models = await identities(s.files);
        const reason = `${o.envVar}=${choice}`;
        const label = s.label ?? engineLabel(entry, s.files);
        return { id: entry.id, entry, selected: 'explicit', reason, models, record: recordOf(entry.id, label, 'explicit', reason, models) };
      }
      const skipped: string[] = [];
      const passed: string[] = [];
      const notes: string[] = [];
      for (const entry of preferred) {
        const s = await entry.supports(locale, env);
        if (!s.ok || s.auto === false) {
          if (!s.ok) skipped.push(`${entry.id}: ${s.reason}`);
          if (!s.ok && !s.silent) passed.push(s.reason);
          if (s.note) notes.push(s.note);
          continue;
        }
        const why = passed.length ? `${passed[0]}${entry.fallbackNote ? ` (${entry.fallbackNote})` : ''}` : (s.reason ?? `${entry.id} runs ${locale ?? 'here'}`);
        const reason = `auto: ${why}${notes.map((n) => `; ${n}`).join('')}`;
        const models = await identities(s.files);
        const label = s.label ?? engineLabel(entry, s.files);
        return { id: entry.id, entry, selected: 'auto', reason, models, record: recordOf(entry.id, label, 'auto', reason, models) };
      }
      throw new EngineUnavailableError(`${o.stage}: no engine here runs ${locale ?? 'this stage'} (${skipped.join('; ')})`, { details: { stage: o.stage } });
    },
  });
}
