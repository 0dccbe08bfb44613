/**
 * What the stages of a version's preparation (prepare-version.ts) share: the job's context and
 * the state each stage reads and adds to. A field is undefined until the stage that sets it ran.
 */
import type { EngineRecord, JobRuntime, PrepareVersionJob, Transcript, VersionScript } from '@dub/core';
import type { TranslateConfig } from '@dub/translate';
import { typedStage } from './typed-stage.js';
import type { StageRunner } from '../stage-runner.js';

export interface VersionContext {
  readonly job: PrepareVersionJob;
  readonly rt: JobRuntime;
  readonly runner: StageRunner;
  /** The blob key of the version's script. */
  readonly scriptKey: string;
  /** The translation configuration (the option, else loadTranslateConfig(process.env)), read once when first needed. */
  translateConfig(): TranslateConfig;
}

export interface VersionState {
  readonly prep: VersionContext;
  /** version transcript: the asset's transcript and its blob key. */
  transcript?: Transcript;
  transcriptKey?: string;
  /** translation: the engine (or reference_srt, none), its record, and each segment's text by id. */
  translation?: { engine: string; record: EngineRecord; texts: Map<string, string> };
  /** script: the script written. */
  script?: VersionScript;
}

/** A version stage whose `run` sees its inputs set. */
export const versionStage = typedStage<VersionState>();
