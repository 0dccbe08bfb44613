/**
 * The shape of a job as a list of stages: each stage module exports one `PipelineStage` (its
 * name in progress and `stage_done` events, its progress weight, the state it reads and its
 * `run`), and a job (generateVersion, prepareAsset) is the list of its stages handed to
 * `runStages`, so a reader sees the pipeline's order in one screen of code.
 *
 * A stage reads the job's state and returns what it adds to it; `runStages` merges that in and
 * goes on. A stage that starts work which runs beside later stages (the quality measurements
 * beside the encode) returns the pending promise as part of the state; a later stage awaits it.
 */
export interface PipelineStage<S extends object> {
  /** The stage's name (the StageRunner's name for progress and `stage_done`; a sub-step may report under others). */
  readonly name: string;
  /** Its share of the job's progress (relative to the other stages' weights). */
  readonly weight: number;
  /** The fields of the state it reads (documentation, and checked: each must be set when it runs). */
  readonly inputs: readonly (keyof S & string)[];
  /**
   * The progress names and weights the stage reports under, in order, where they are not
   * `{ [name]: weight }`: a stage whose sub-steps report under names of their own (generation's
   * synthesis reports source, voices and synthesis), or `{}` for a step with no progress share.
   */
  readonly progress?: Readonly<Record<string, number>>;
  /** Whether the stage runs for this job (default: always); one that does not has no progress share. */
  readonly when?: (state: Readonly<S>) => boolean;
  /** Run the stage: what it adds to (or replaces in) the state. */
  run(state: Readonly<S>): Promise<Partial<S>>;
}

/**
 * A step with no progress share of its own (a plan, the report, a final write, the event): weight
 * 0 and no progress names, so the job's progress is shared among the other stages only.
 */
export function unweightedStage<S extends object>(stage: Omit<PipelineStage<S>, 'weight' | 'progress'>): PipelineStage<S> {
  return { ...stage, weight: 0, progress: {} };
}

/** The StageRunner weights of the stages that run for a job with this (initial) state. */
export function stageWeights<S extends object>(stages: readonly PipelineStage<S>[], state: Readonly<S>): Record<string, number> {
  const weights: Record<string, number> = {};
  for (const s of stages) {
    if (s.when && !s.when(state)) continue;
    for (const [name, w] of Object.entries(s.progress ?? { [s.name]: s.weight })) weights[name] = (weights[name] ?? 0) + w;
  }
  return weights;
}

/**
 * Runs the stages in order over `state`, merging what each returns. A stage whose `inputs` are
 * not all set (undefined) when its turn comes is a programming error in the list's order and
 * throws before it runs.
 */
export async function runStages<S extends object>(stages: readonly PipelineStage<S>[], state: S): Promise<S> {
  let at: S = state;
  for (const s of stages) {
    if (s.when && !s.when(at)) continue;
    const missing = s.inputs.filter((k) => at[k] === undefined);
    if (missing.length) throw new Error(`stage ${s.name} runs before its inputs are set: ${missing.join(', ')}`);
    at = { ...at, ...(await s.run(at)) };
  }
  return at;
}
