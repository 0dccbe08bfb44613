/**
 * @dub/lips: face detection (BlazeFace ONNX), mouth tracking and lips engines that re-render the
 * mouth region of a video to follow dubbed speech. Usable alone:
 *   import { lipSync } from '@dub/lips';
 */
export type { PreparedLips, LipsEngine, LipsContext, FaceTrack, DubbedSpeech, TimedWord, LipsRenderOptions, LipsRenderResult, LipsEncodeOptions, WithLimit } from './types.js';
export { lipSync, detectFaces, type LipSyncRequest, type LipSyncResult } from './lip-sync.js';
export { resolveLipsOptions, detectStride, LIPS_PROFILES, type LipsOptions, type ResolvedLipsOptions, type LipsEngineId, type LipsProfile } from './options.js';
export { LIPS_ENGINES, LIPS_ENGINE_IDS, MUSETALK_WEIGHTS, OFFLINE_LIPS_ENGINE, isLipsEngineId, hasWav2LipModel, lipsEngineHost, type LipsEngineConfig, type LipsEngineHost } from './registry.js';
export { BlazeFaceDetector, BLAZEFACE_MODEL_ID, BLAZEFACE_FILES, type BlazeFaceOptions, type BlazeFaceRange, type FaceDetection } from './face/blazeface.js';
export { anchorLayers, generateAnchors, BLAZEFACE_STRIDES, type Anchor, type AnchorLayer } from './face/anchors.js';
export { decodeDetections, weightedNms, iou, KEYPOINT, type Detection, type Point } from './face/decode.js';
export { trackFaces, TRACKING, type TrackFacesOptions, type FaceDetectorLike } from './face/face-track.js';
export { OneEuroFilter, type OneEuroOptions } from './face/one-euro.js';
export { frameOf, paramsOf, MOUTH_BOX, type FaceFrame, type FaceParams } from './face/mouth-region.js';
export { createImage, cloneImage, cropResize, clipRect, scaleRect, sampleBilinear, letterboxTensor, type RgbImage, type Rect, type Letterbox } from './image/rgb-image.js';
export { featherWeight, smoothstep } from './image/feather.js';
export { readFrames, type ReadFramesOptions } from './video/frame-reader.js';
export { FrameWriter, type FrameWriterOptions } from './video/frame-writer.js';
export { videoInfo, type VideoInfo } from './video/video-info.js';
export { frameLevels, speechWav, ENVELOPE_SAMPLE_RATE } from './audio/speech-envelope.js';
export { opennessFromLevels, applyVisemes, mouthTargets, type OpennessOptions } from './audio/openness.js';
export { phonemizeWords, visemeWeights, phonemeOpenness, splitIpa, type PhonemeOptions } from './audio/phonemes.js';
export { MelWindows, melFilterbank, hannWindow, normaliseMel, WAV2LIP_MEL } from './audio/mel.js';
export { warpMouth, WARP } from './engines/mouth-warp.js';
export { transformFrames, type FrameOp } from './engines/frame-loop.js';
export { renderChunked, DEFAULT_CHUNK_SECONDS, type LipsChunkStore, type ChunkedRenderResult } from './engines/chunked.js';
export { VisemeWarpEngine, createVisemeWarpEngine, mouthAmounts, LOCAL_LEVEL_SECONDS, type VisemeWarpOptions } from './engines/viseme-warp.js';
export { Wav2LipEngine, createWav2LipEngine, resolveWav2LipModel, faceTensor, pasteFace, wav2lipCrop, WAV2LIP_PADS, WAV2LIP_MODEL_ID, WAV2LIP_FILE, WAV2LIP_SIZE, type Wav2LipOptions } from './engines/wav2lip.js';
export { MuseTalkEngine, createMuseTalkEngine, resolveMuseTalkModels, musetalkCrop, musetalkImageBatch, pasteMuseTalkFace, MUSETALK_MODEL_ID, MUSETALK_GRAPHS, MUSETALK_SIZE, MUSETALK_EXTRA_MARGIN, MUSETALK_INSTALL_HINT, type MuseTalkOptions, type MuseTalkFiles } from './engines/musetalk.js';
export { MuseTalkAudio, MUSETALK_AUDIO, musetalkWindowStart, musetalkWindowRows, musetalkFeatureLength, musetalkPositionalEncoding } from './audio/musetalk-audio.js';
