/**
 * @dub/onnx: ONNX Runtime for the stages. The packages that run models (asr, separation, voice,
 * lips) depend on it; the others (srt, studio, api) do not pull in onnxruntime-node.
 */
export * from './onnx.js';
