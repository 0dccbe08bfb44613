import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { bytesToUnicode, WhisperTokenizer } from './whisper/tokenizer.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/whisper-tiny-test/tokenizer.json', import.meta.url));

describe('WhisperTokenizer', () => {
  const tok = WhisperTokenizer.fromFile(FIXTURE);

  it('maps all 256 bytes to distinct printable characters (GPT-2 byte level)', () => {
    const m = bytesToUnicode();
    expect(new Set(m).size).toBe(256);
    expect(m[32]).toBe('Ġ');
    expect(m[65]).toBe('A');
  });

  it('applies merges: " hello world" is two tokens', () => {
    const ids = tok.encode(' hello world');
    expect(ids.length).toBe(2);
    expect(ids.map((i) => tok.tokenText(i))).toEqual(['Ġhello', 'Ġworld']);
    expect(tok.encode('hello').length).toBe(5); // no merge without the leading space
  });

  it('round-trips any text, multi-byte characters included', () => {
    for (const s of [' hello world', 'Ich bin ein Berliner.', ' 日本語のテキスト', 'emoji 🎬 ok', "it's  two  spaces\n"]) expect(tok.decode(tok.encode(s))).toBe(s);
    fc.assert(fc.property(fc.string({ maxLength: 40 }), (s) => tok.decode(tok.encode(s)) === s), { numRuns: 200 });
  });

  it('knows the Whisper special tokens, languages and timestamps', () => {
    expect(tok.sot).toBe(tok.eot + 1);
    expect([...tok.languages.keys()]).toEqual(['en', 'de', 'fr', 'ja']);
    expect(tok.timestampBegin).toBe(tok.noTimestamps + 1);
    expect(tok.isTimestamp(tok.timestampBegin + 50)).toBe(true);
    expect(tok.timestampSeconds(tok.timestampBegin + 50)).toBe(1);
    expect(tok.timestampSeconds(tok.timestampBegin + 1500)).toBe(30);
    // Special and timestamp tokens decode to nothing.
    expect(tok.decode([tok.sot, tok.languageToken('de')!, ...tok.encode(' hello'), tok.timestampBegin + 3, tok.eot])).toBe(' hello');
  });

  it('rejects a file that is not a Whisper BPE tokenizer', () => {
    expect(() => new WhisperTokenizer({ model: { vocab: { a: 0 }, merges: [] } })).toThrow(/special token/);
    expect(() => new WhisperTokenizer({} as never)).toThrow(/model.vocab/);
  });
});
