/**
 * MuseTalk's audio front end (TMElyralab/MuseTalk musetalk/utils/audio_processor.py, v1.5): the
 * 16 kHz speech is cut into 30 s segments, each through Whisper's log-mel (80 mels, padded to
 * 3000 frames: @dub/asr's WhisperFeatureExtractor, the same front end as whisper-tiny's feature
 * extractor) and the whisper-tiny encoder, whose hidden states (embeddings and 4 layers, 384
 * channels) come out 50 per second (`[1500, 5, 384]` a segment). The segments' features are
 * joined and kept up to floor(seconds * 50). Video frame i takes a window of 10 feature frames (2 x
 * (2 + 2 + 1)) starting at floor(i * 50 / fps) in the features padded with 2 * ceil(50 / fps) zero
 * frames before (`get_whisper_chunk`); its [10, 5, 384] values, read as [50, 384], plus the
 * sinusoidal positional encoding of musetalk/models/unet.py, are the UNet's `audio_prompts`.
 *
 * Two choices differ from the reference script, both for frame timing only: it rounds the frame
 * rate down to an integer (`int(fps)`), which at 29.97 fps would move the window 1.1 s late after a
 * minute, so the true rate is used (the same windows at integer rates); and at a variable frame
 * rate the window follows each frame's own time. Checked against an independent numpy
 * implementation of `get_whisper_chunk` and `PositionalEncoding` (scripts/make-musetalk-audio-references.py,
 * fixtures/musetalk-audio-references.json, src/musetalk-audio.test.ts).
 *
 * Segments are encoded when a window first needs them and the last two are kept, so memory does not
 * grow with the track (11.5 MB a segment).
 */
import { WavReader } from '@dub/media';

export const MUSETALK_AUDIO = Object.freeze({
  sampleRate: 16000,
  /** Whisper encoder frames per second. */
  featureRate: 50,
  segmentSeconds: 30,
  segmentFeatures: 1500,
  melBins: 80,
  melFrames: 3000,
  layers: 5,
  dim: 384,
  /** audio_padding_length_left / _right of the reference script. */
  paddingLeft: 2,
  paddingRight: 2,
  /** 2 * (left + right + 1) feature frames a video frame. */
  windowFeatures: 10,
  /** Rows of a frame's prompt: windowFeatures x layers. */
  promptRows: 50,
});

/**
 * The first feature frame (unpadded index; negative = in the zero padding) of frame `index`'s
 * window at `fps`; `time` (seconds from the picture's first frame) at a variable frame rate.
 */
export function musetalkWindowStart(index: number, fps: number, time?: number): number {
  const multiplier = MUSETALK_AUDIO.featureRate / fps;
  const padding = Math.ceil(multiplier) * MUSETALK_AUDIO.paddingLeft;
  // the reference: floor(frame_index * whisper_idx_multiplier) into the padded features
  const at = time === undefined ? Math.floor(index * multiplier) : Math.floor(time * MUSETALK_AUDIO.featureRate + 1e-9);
  return at - padding;
}

/** Feature frames kept of `samples` of 16 kHz audio: floor(seconds * 50), as the reference trims them. */
export function musetalkFeatureLength(samples: number, sampleRate = MUSETALK_AUDIO.sampleRate): number {
  return Math.floor((samples * MUSETALK_AUDIO.featureRate) / sampleRate);
}

/** The source feature frame of each of the window's 10 rows, -1 where the window reads zero padding. */
export function musetalkWindowRows(start: number, featureLength: number): number[] {
  const rows: number[] = [];
  for (let r = 0; r < MUSETALK_AUDIO.windowFeatures; r++) {
    const t = start + r;
    rows.push(t >= 0 && t < featureLength ? t : -1);
  }
  return rows;
}

let pe: Float32Array | undefined;

/** MuseTalk's PositionalEncoding (d_model 384) for the 50 prompt rows, row-major [50, 384]. */
export function musetalkPositionalEncoding(): Float32Array {
  if (pe) return pe;
  const { promptRows: rows, dim } = MUSETALK_AUDIO;
  const out = new Float32Array(rows * dim);
  for (let p = 0; p < rows; p++) {
    for (let k = 0; k < dim; k += 2) {
      const angle = p * Math.exp(k * (-Math.log(10000) / dim));
      out[p * dim + k] = Math.sin(angle);
      out[p * dim + k + 1] = Math.cos(angle);
    }
  }
  pe = out;
  return out;
}

/** Encodes one segment: Whisper log-mel f32[80 * 3000] -> hidden states f32[1500 * 5 * 384]. */
export type SegmentEncoder = (mel: Float32Array) => Promise<Float32Array>;
/** Whisper's log-mel of up to 30 s of 16 kHz mono audio, row-major [80][3000]. */
export type LogMel = (audio: Float32Array) => Float32Array;

/** The audio prompts of one speech track, read segment by segment from a 16 kHz mono WAV. */
export class MuseTalkAudio {
  private readonly cache = new Map<number, Promise<Float32Array>>();

  private constructor(
    private readonly reader: WavReader,
    private readonly logMel: LogMel,
    private readonly encode: SegmentEncoder,
    readonly featureLength: number,
  ) {}

  static async open(wav: string, logMel: LogMel, encode: SegmentEncoder): Promise<MuseTalkAudio> {
    const reader = await WavReader.open(wav);
    if (reader.sampleRate !== MUSETALK_AUDIO.sampleRate) {
      await reader.close();
      throw new RangeError(`MuseTalk's audio must be ${MUSETALK_AUDIO.sampleRate} Hz, ${wav} is ${reader.sampleRate} Hz`);
    }
    return new MuseTalkAudio(reader, logMel, encode, musetalkFeatureLength(reader.frames));
  }

  private segment(k: number): Promise<Float32Array> {
    let p = this.cache.get(k);
    if (!p) {
      const n = MUSETALK_AUDIO.sampleRate * MUSETALK_AUDIO.segmentSeconds;
      p = this.reader.read(k * n, n).then((ch) => this.encode(this.logMel(ch[0] ?? new Float32Array(0))));
      this.cache.set(k, p);
      // keep the last two segments (a window can straddle a boundary)
      for (const key of this.cache.keys()) if (this.cache.size > 2 && key !== k) this.cache.delete(key);
      p.catch(() => this.cache.delete(k));
    }
    return p;
  }

  /** The raw window (10 x 5 x 384 = [50, 384]) starting at feature frame `start`, zeros outside the track. */
  async window(start: number): Promise<Float32Array> {
    const { layers, dim, segmentFeatures } = MUSETALK_AUDIO;
    const row = layers * dim;
    const out = new Float32Array(MUSETALK_AUDIO.promptRows * dim);
    const rows = musetalkWindowRows(start, this.featureLength);
    for (let r = 0; r < rows.length; r++) {
      const t = rows[r]!;
      if (t < 0) continue;
      const seg = await this.segment(Math.floor(t / segmentFeatures));
      const j = t % segmentFeatures;
      out.set(seg.subarray(j * row, (j + 1) * row), r * row);
    }
    return out;
  }

  /** The UNet's `audio_prompts` of frame `index`: its window plus the positional encoding. */
  async prompt(index: number, fps: number, time?: number): Promise<Float32Array> {
    const w = await this.window(musetalkWindowStart(index, fps, time));
    const enc = musetalkPositionalEncoding();
    for (let i = 0; i < w.length; i++) w[i]! += enc[i]!;
    return w;
  }

  async close(): Promise<void> {
    this.cache.clear();
    await this.reader.close();
  }
}
