/** The four subtitle profiles of the interface contract (GET /v1/versions/{id}/srt). */

export const SRT_PROFILE_NAMES = ['regular', 'mobile', 'global_regular', 'global_mobile'] as const;
export type SrtProfileName = (typeof SRT_PROFILE_NAMES)[number];

export interface SrtProfileLimits {
  /** Most characters in one block (both lines; the line break is not counted). */
  maxBlockChars: number;
  /** Most characters on one line. */
  maxLineChars: number;
  /** Most lines in one block. */
  maxLines: number;
  /** Most characters per second: the block's characters divided by its duration. */
  maxCharsPerSecond: number;
  /**
   * Blocks are built from one word stream across sentence and segment boundaries (true), or
   * within each input segment (false).
   */
  crossSegment: boolean;
}

const REGULAR = { maxBlockChars: 70, maxLineChars: 42, maxLines: 2, maxCharsPerSecond: 21 } as const;
const MOBILE = { maxBlockChars: 45, maxLineChars: 22, maxLines: 2, maxCharsPerSecond: 17 } as const;

export const SRT_PROFILE_LIMITS: Readonly<Record<SrtProfileName, Readonly<SrtProfileLimits>>> = Object.freeze({
  regular: Object.freeze({ ...REGULAR, crossSegment: false }),
  mobile: Object.freeze({ ...MOBILE, crossSegment: false }),
  global_regular: Object.freeze({ ...REGULAR, crossSegment: true }),
  global_mobile: Object.freeze({ ...MOBILE, crossSegment: true }),
});

export const DEFAULT_SRT_PROFILE: SrtProfileName = 'regular';

export function isSrtProfileName(name: string): name is SrtProfileName {
  return (SRT_PROFILE_NAMES as readonly string[]).includes(name);
}
