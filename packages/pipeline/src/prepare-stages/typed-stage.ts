/**
 * A PipelineStage whose `run` sees its inputs as set: runStages runs a stage only once each of
 * its `inputs` is defined, so the state's optional fields it lists are typed as present there.
 * `run` gets the job's setup (the state's `prep`: the job, the runtime, the runner, ...) as a
 * second argument of its own, apart from what the earlier stages set.
 */
import type { PipelineStage } from '../pipeline-stage.js';

/** State `S` with the fields `K` set (`null`, a decided absence, stays possible where the field allows it). */
export type With<S, K extends keyof S> = Readonly<S & { [P in K]-?: Exclude<S[P], undefined> }>;

/** The stage builder of state `S`: `typedStage<S>()({ name, weight, inputs, run(state, prep) })`. */
export function typedStage<S extends { readonly prep: object }>() {
  return <K extends keyof S & string>(stage: { name: string; weight: number; inputs: readonly K[]; run(state: With<S, K>, prep: S['prep']): Promise<Partial<S>> }): PipelineStage<S> => ({
    name: stage.name,
    weight: stage.weight,
    inputs: stage.inputs,
    run: (state) => stage.run(state as With<S, K>, state.prep),
  });
}
