/**
 * models/manifest.json integrity: every file is pinned (sha256, with any URL at a fixed revision)
 * or explicitly marked "pin": "first-fetch" with the reason (pin_note); md5, crc32 and size, where a
 * publisher gives them, are well-formed; pinned downloads carry their size and one revision per repository.
 */
import { describe, expect, it } from 'vitest';
import { loadManifest } from './models.js';

const manifest = loadManifest();

/** Nix's base32 form of a sha256 (as fetchurl takes it) in hex: its digits are read from the end, 5 bits each. */
function nixBase32ToHex(s: string): string {
  const alphabet = '0123456789abcdfghijklmnpqrsvwxyz';
  const out = new Uint8Array(Math.floor((s.length * 5) / 8));
  for (let n = 0; n < s.length; n++) {
    const digit = alphabet.indexOf(s[s.length - 1 - n]!);
    const b = n * 5;
    const i = b >> 3;
    const j = b & 7;
    out[i]! |= (digit << j) & 0xff;
    if (i + 1 < out.length) out[i + 1]! |= digit >> (8 - j);
  }
  return Buffer.from(out).toString('hex');
}
const files = manifest.models.flatMap((m) => m.files.map((f) => ({ id: m.id, ...f })));

describe('models/manifest.json', () => {
  it('every file has a sha256, or is marked first-fetch with the reason no sha256 is pinned', () => {
    const bad = files.filter((f) => !(f.sha256 && /^[0-9a-f]{64}$/.test(f.sha256)) && !(f.pin === 'first-fetch' && (f.pin_note ?? '').length > 40));
    expect(bad.map((f) => `${f.id}/${f.name}`)).toEqual([]);
  });

  it('every URL is at a fixed revision, or the entry says why it is not', () => {
    const moving = files.filter((f) => f.url && /\/resolve\/main\/|\/raw\/main\/|\/latest\//.test(f.url));
    for (const f of moving) expect(f.pin_note, `${f.id}/${f.name}`).toMatch(/resolve\/main|no commit/);
    const hf = files.filter((f) => f.url?.startsWith('https://huggingface.co/'));
    for (const f of hf) expect(f.url, `${f.id}/${f.name}`).toMatch(/\/resolve\/(v[\d.]+|[0-9a-f]{40}|main)\//);
  });

  it('published md5, crc32 and sizes are well-formed, and every Piper file with an md5 has its size too', () => {
    for (const f of files) {
      if (f.md5 !== undefined) expect(f.md5, `${f.id}/${f.name}`).toMatch(/^[0-9a-f]{32}$/);
      if (f.crc32 !== undefined) expect(f.crc32, `${f.id}/${f.name}`).toMatch(/^[0-9a-f]{8}$/);
      if (f.size !== undefined) expect(Number.isInteger(f.size) && f.size > 0, `${f.id}/${f.name}`).toBe(true);
      if (f.md5) expect(f.size, `${f.id}/${f.name}`).toBeGreaterThan(0);
    }
    // rhasspy/piper-voices voices.json: en_US-lessac-medium.onnx is 63201294 bytes, md5 2fc642b5...
    expect(files.find((f) => f.name === 'en_US-lessac-medium.onnx')).toMatchObject({ size: 63201294, md5: '2fc642b535197b6305c7c8f92dc8b24f' });
    // pt_BR-faber: voices.json's size and md5 beside the sha256 public downloaders pin
    expect(files.find((f) => f.name === 'pt_BR-faber-medium.onnx')).toMatchObject({ size: 63201294, md5: 'e0724a2f07965f6523d2a1e96b488a4c', sha256: '858555e3a064209c57088fe6bd70c4c3dc54d03eaa00c45d5ecaf43a33f95aa7' });
  });

  it('reads Nix base32 hashes right (the es_ES-davefx-medium voice: Nix fetchurl 05x94bi4... = the sha256 pinned from other sources)', () => {
    expect(nixBase32ToHex('05x94bi45i62crywl6wy5ly3b4qkpim8kab5qbj6wcbc38xv0n36')).toBe(files.find((f) => f.name === 'es_ES-davefx-medium.onnx')!.sha256);
  });

  it('a downloaded file with a sha256 has its size too, and the files of one Hugging Face repository come from one revision', () => {
    for (const f of files) if (f.url && f.sha256) expect(f.size, `${f.id}/${f.name}`).toBeGreaterThan(0);
    for (const m of manifest.models) {
      const revisions = new Set(m.files.map((f) => /^https:\/\/huggingface\.co\/[^/]+\/[^/]+\/resolve\/([^/]+)\//.exec(f.url ?? '')?.[1]).filter(Boolean));
      expect(revisions.size, m.id).toBeLessThanOrEqual(1);
    }
    // Chatterbox: the tokenizer and the graphs have drifted against each other on main; all of them at 452d3f43.
    const chatterbox = manifest.models.find((m) => m.id === 'chatterbox-multilingual')!;
    for (const f of chatterbox.files) expect(f.url, f.name).toContain('/resolve/452d3f434aa592098f1eedac9099f33642ab2da5/');
    // es_MX-claude-high: a Nix fetchurl of resolve/v1.0.0 pins 181y101f... (Nix base32), the same sha256 a catalogue at v1.0.0 lists with its size
    expect(files.find((f) => f.name === 'es_MX-claude-high.onnx')).toMatchObject({ size: 63122309, sha256: nixBase32ToHex('181y101fw0hfy7ili73wnjh6gynwxk9afvvymgc2r1b3x9qhmx1y') });
    expect(files.find((f) => f.name === 'es_MX-claude-high.onnx.json')).toMatchObject({ size: 4963, sha256: nixBase32ToHex('0bf14dvmbdayrxq02zw00s4ajm4bdc4wl3bw9lxwpr600gvq3z0s') });
    // WeSpeaker as published for commit f0c48c29 (Hugging Face LFS object id and size).
    expect(files.find((f) => f.name === 'voxceleb_resnet34_LM.onnx')).toMatchObject({ size: 26530309, sha256: '7bb2f06e9df17cdf1ef14ee8a15ab08ed28e8d0ef5054ee135741560df2ec068' });
  });
});
