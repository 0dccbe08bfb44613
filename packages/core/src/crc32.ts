/**
 * CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), the checksum zlib.crc32 computes and
 * FaceFusion publishes in its `.hash` files beside each model (`format(zlib.crc32(content),
 * '08x')`). Node 20 has no zlib.crc32, so this is the table-driven form, fed chunk by chunk.
 */
const TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

export class Crc32 {
  private crc = 0xffffffff;
  update(chunk: Uint8Array): this {
    let c = this.crc;
    for (let i = 0; i < chunk.length; i++) c = TABLE[(c ^ chunk[i]!) & 0xff]! ^ (c >>> 8);
    this.crc = c;
    return this;
  }
  /** The checksum as 8 lowercase hex digits (as FaceFusion's `.hash` files write it). */
  hex(): string {
    return ((this.crc ^ 0xffffffff) >>> 0).toString(16).padStart(8, '0');
  }
}

export function crc32(data: Uint8Array): string {
  return new Crc32().update(data).hex();
}
