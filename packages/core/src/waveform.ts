/**
 * The waveform's wire type (GET /v1/versions/{id}/waveform): the API builds it
 * (packages/api/src/waveform.ts) and the studio decodes it (packages/studio/src/waveform.ts).
 */

/** The JSON body of GET /v1/versions/{id}/waveform. */
export interface WaveformBody {
  asset_id: string;
  /** Windows per second. */
  rate: number;
  /** Seconds of audio measured. */
  duration: number;
  /** Number of windows (bytes in `peak` and in `rms` once decoded). */
  count: number;
  /** `u8-db`: one byte per window, dBFS = floor_db * (1 - byte / 255); byte 0 is floor_db or quieter. */
  encoding: 'u8-db';
  floor_db: number;
  /** Base64 of the peak level bytes. */
  peak: string;
  /** Base64 of the RMS level bytes. */
  rms: string;
}
