/** What @dub/asr uses of pako 2.1.0 (a port of zlib 1.2.8's deflate, byte for byte; it ships no types). */
declare module 'pako' {
  /** zlib.compress: a zlib stream (header, deflate data, Adler-32), level 6 by default. */
  export function deflate(data: Uint8Array, options?: { level?: number }): Uint8Array;
}
