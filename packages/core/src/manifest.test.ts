/**
 * models/manifest.json integrity: every file is pinned (sha256, with any URL at a fixed revision)
 * or explicitly marked "pin": "first-fetch" with the reason (pin_note); md5, crc32 and size, where a
 * publisher gives them, are well-formed; pinned downloads carry their size and one revision per repository.
 */
import { describe, expect, it } from 'vitest';
import { loadManifest } from './models.js';

const manifest = loadManifest();
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
    // WeSpeaker as published for commit f0c48c29 (Hugging Face LFS object id and size).
    expect(files.find((f) => f.name === 'voxceleb_resnet34_LM.onnx')).toMatchObject({ size: 26530309, sha256: '7bb2f06e9df17cdf1ef14ee8a15ab08ed28e8d0ef5054ee135741560df2ec068' });
  });
});
