/**
 * Runs one step of a job through the ArtifactCache and tells the world: a `stage_done` event
 * (cached or not, seconds) and progress through the job's onProgress, each stage mapped into its
 * share of the job's [0, 1]; a report below what the job reported before (stages may overlap) is
 * not passed on.
 */
import { reportProgress, subContext, type JobRuntime, type StageContext } from '@dub/core';
import type { ArtifactCache, StageOutput, StageResult } from './artifacts.js';

export interface StagePlan {
  /** Stage name -> relative weight (progress share). */
  readonly weights: Readonly<Record<string, number>>;
}

export class StageRunner {
  private readonly offsets = new Map<string, [number, number]>();
  /** Every stage reported so far, in order: seconds and whether its output came from the cache. */
  readonly timings: { stage: string; seconds: number; cached: boolean }[] = [];

  constructor(
    private readonly rt: JobRuntime,
    private readonly cache: ArtifactCache,
    private readonly job: { type: string; version_id?: string },
    plan: StagePlan,
  ) {
    const total = Object.values(plan.weights).reduce((a, b) => a + b, 0) || 1;
    let at = 0;
    for (const [stage, w] of Object.entries(plan.weights)) {
      this.offsets.set(stage, [at / total, (at + w) / total]);
      at += w;
    }
  }

  /** The context a stage's own code gets: progress mapped into the stage's share of the job. */
  context(stage: string): StageContext {
    const [from, to] = this.offsets.get(stage) ?? [0, 1];
    return subContext(this.jobContext, stage, from, to);
  }

  /**
   * The job's highest progress so far. A report below it (a stage that runs beside later ones,
   * such as the trim beside the audio stages) is not passed on: the job's progress never moves
   * back, and a progress display does not flip between the overlapping stages.
   */
  private reached = 0;
  private get jobContext(): StageContext {
    const parent = this.rt.ctx.onProgress;
    if (!parent) return this.rt.ctx;
    return {
      ...this.rt.ctx,
      onProgress: (p) => {
        if (p.fraction < this.reached) return;
        this.reached = p.fraction;
        parent(p);
      },
    };
  }

  /** Run `produce` unless the cache has the output for (stage, inputs); emit stage_done either way. */
  async run<T>(stage: string, inputs: unknown, produce: (out: StageOutput, ctx: StageContext) => Promise<T>): Promise<StageResult<T>> {
    const ctx = this.context(stage);
    const t0 = performance.now();
    // a report at its start, so a display times the stage from when it begins, not from its
    // first own report (separation's first comes after its first 7.8 s window)
    reportProgress(ctx, stage, 0);
    const result = await this.cache.run(stage, inputs, ctx, (out) => produce(out, ctx));
    await this.done(stage, result.cached, (performance.now() - t0) / 1000);
    return result;
  }

  /** Report a step that does not go through the cache (cheap checks, final writes). */
  async done(stage: string, cached: boolean, seconds: number): Promise<void> {
    this.timings.push({ stage, seconds: Number(seconds.toFixed(3)), cached });
    reportProgress(this.context(stage), stage, 1);
    await this.rt.emit({
      type: 'stage_done',
      job_type: this.job.type,
      ...(this.job.version_id ? { version_id: this.job.version_id } : {}),
      stage,
      cached,
      seconds: Number(seconds.toFixed(3)),
    });
  }
}
