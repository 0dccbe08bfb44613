/**
 * @dub/onnx: ONNX Runtime for the stages. The packages that run models (asr, separation, voice,
 * lips) depend on it, and so do those that run them: pipeline, worker, and the API (its line
 * synthesis thread, line-synth-thread.ts, keeps a SessionCache; it also imports pipeline and
 * voice). core, srt and studio do not pull in onnxruntime-node (test/package-graph.test.ts).
 */
export * from './onnx.js';
export { convIntegerAsMatMul, convIntegerModelFile, derivedModelsDir, int8GemmExact, CONV_INTEGER_REWRITE_VERSION, type ConvIntegerRewrite, type ConvIntegerModel } from './conv-integer.js';
export { keepGraphOutputs, graphOutputsModelFile, graphOutputsTrimmed, GRAPH_OUTPUTS_VERSION, type GraphOutputsTrim, type GraphOutputsModel } from './graph-outputs.js';
export { optimizedGraphsOn, optimizedGraphFile, createThroughOptimizedGraph, cpuIdentity, OPTIMIZED_GRAPH_VERSION, OPTIMIZED_GRAPH_MIN_BYTES, type OptimizedGraph } from './optimized-graph.js';
export { pruneDerivedModels, PART_FILE_MAX_AGE_MS, type PruneResult, type DerivedSourceRecord } from './prune-derived.js';
export { dequantizedMatMulAsDynamic, dequantizedMatMulModelFile, dequantizedMatMulDynamic, DEQUANT_MATMUL_VERSION, type DequantizedMatMulRewrite } from './dequant-matmul.js';
