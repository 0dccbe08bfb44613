import { describe, expect, it } from 'vitest';
import { Crc32, crc32 } from './crc32.js';

describe('crc32', () => {
  it('matches the standard CRC-32 check values', () => {
    expect(crc32(Buffer.from('123456789'))).toBe('cbf43926');
    expect(crc32(Buffer.alloc(0))).toBe('00000000');
    expect(crc32(Buffer.from('The quick brown fox jumps over the lazy dog'))).toBe('414fa339');
    // zero-padded to 8 digits, as FaceFusion's .hash files write it: python zlib.crc32(b'a') = 0xe8b7be43, crc32(b'\x00') = 0xd202ef8d
    expect(crc32(Buffer.from('a'))).toBe('e8b7be43');
    expect(crc32(Buffer.from([0]))).toBe('d202ef8d');
  });
  it('gives the same value fed in chunks as in one piece', () => {
    const data = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 7919) % 251));
    const c = new Crc32();
    for (let i = 0; i < data.length; i += 65_537) c.update(data.subarray(i, i + 65_537));
    // python: format(zlib.crc32(bytes((i * 7919) % 251 for i in range(300000))), '08x')
    expect(c.hex()).toBe('e06390e4');
    expect(crc32(data)).toBe('e06390e4');
  });
});
