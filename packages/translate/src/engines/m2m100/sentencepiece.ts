/**
 * A SentencePiece BPE encoder and decoder that reads the `.model` file itself (the ModelProto
 * protobuf), written after Google's reference implementation (sentencepiece 0.1.x:
 * normalizer.cc, bpe_model.cc, sentencepiece_processor.cc) and tested against it token for token
 * (fixtures/m2m100-tokenizer-references.json, made with the reference library by
 * scripts/make-tiny-m2m100.py):
 *
 * - Normalisation: the model's precompiled charsmap (a darts-clone double-array trie over UTF-8
 *   bytes, longest match first, its replacement from the string pool; nmt_nfkc is NFKC plus the
 *   NMT rules), leading, trailing and repeated whitespace removed, a dummy "▁" prefix, spaces
 *   written as "▁".
 * - BPE: start from characters, repeatedly merge the adjacent pair whose concatenation is a piece
 *   with the highest score (ties: leftmost); a symbol that is no piece is unknown, and a run of
 *   unknown symbols is one unknown piece (as the reference merges them).
 * - Decoding: pieces joined, "▁" back to spaces, the dummy prefix's space removed.
 *
 * Only what M2M100's sentencepiece.bpe.model uses is implemented: BPE (not unigram), no
 * user-defined symbols matched inside text, no byte fallback.
 */
import { ModelError } from '@dub/core';

export const SPACE_SYMBOL = '\u2581';

/** SentencePiece piece types (sentencepiece_model.proto). */
export const PIECE_TYPE = { NORMAL: 1, UNKNOWN: 2, CONTROL: 3, USER_DEFINED: 4, BYTE: 6, UNUSED: 5 } as const;

export interface SpmPiece {
  piece: string;
  score: number;
  type: number;
}

export interface SpmModel {
  pieces: SpmPiece[];
  /** TrainerSpec.model_type: 1 unigram, 2 BPE, 3 word, 4 char. */
  modelType: number;
  normalizer: {
    name: string;
    precompiledCharsmap: Uint8Array;
    addDummyPrefix: boolean;
    removeExtraWhitespaces: boolean;
    escapeWhitespaces: boolean;
  };
}

// ---------------------------------------------------------------- protobuf reading

class Reader {
  pos = 0;
  constructor(readonly buf: Uint8Array, private readonly end = buf.length, start = 0) {
    this.pos = start;
  }
  done(): boolean {
    return this.pos >= this.end;
  }
  varint(): number {
    let result = 0;
    let mul = 1;
    for (;;) {
      if (this.pos >= this.end) throw new ModelError('SentencePiece model: truncated varint');
      const b = this.buf[this.pos++]!;
      result += (b & 0x7f) * mul;
      if (b < 0x80) return result;
      mul *= 128;
    }
  }
  bytes(): Uint8Array {
    const n = this.varint();
    if (this.pos + n > this.end) throw new ModelError('SentencePiece model: truncated field');
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  float(): number {
    const v = new DataView(this.buf.buffer, this.buf.byteOffset + this.pos, 4).getFloat32(0, true);
    this.pos += 4;
    return v;
  }
  skip(wire: number): void {
    if (wire === 0) this.varint();
    else if (wire === 1) this.pos += 8;
    else if (wire === 2) this.bytes();
    else if (wire === 5) this.pos += 4;
    else throw new ModelError(`SentencePiece model: unsupported protobuf wire type ${wire}`);
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: false });

/** Parse a SentencePiece `.model` file (ModelProto). */
export function parseSpmModel(data: Uint8Array): SpmModel {
  const r = new Reader(data);
  const pieces: SpmPiece[] = [];
  let modelType = 1;
  const normalizer = { name: '', precompiledCharsmap: new Uint8Array(0), addDummyPrefix: true, removeExtraWhitespaces: true, escapeWhitespaces: true };
  while (!r.done()) {
    const tag = r.varint();
    const field = Math.floor(tag / 8);
    const wire = tag & 7;
    if (field === 1 && wire === 2) {
      const b = r.bytes();
      const pr = new Reader(b);
      const p: SpmPiece = { piece: '', score: 0, type: PIECE_TYPE.NORMAL };
      while (!pr.done()) {
        const t = pr.varint();
        const f = Math.floor(t / 8);
        if (f === 1 && (t & 7) === 2) p.piece = utf8.decode(pr.bytes());
        else if (f === 2 && (t & 7) === 5) p.score = pr.float();
        else if (f === 3 && (t & 7) === 0) p.type = pr.varint();
        else pr.skip(t & 7);
      }
      pieces.push(p);
    } else if (field === 2 && wire === 2) {
      const tr = new Reader(r.bytes());
      while (!tr.done()) {
        const t = tr.varint();
        if (Math.floor(t / 8) === 3 && (t & 7) === 0) modelType = tr.varint();
        else tr.skip(t & 7);
      }
    } else if (field === 3 && wire === 2) {
      const nr = new Reader(r.bytes());
      while (!nr.done()) {
        const t = nr.varint();
        const f = Math.floor(t / 8);
        const w = t & 7;
        if (f === 1 && w === 2) normalizer.name = utf8.decode(nr.bytes());
        else if (f === 2 && w === 2) normalizer.precompiledCharsmap = nr.bytes().slice();
        else if (f === 3 && w === 0) normalizer.addDummyPrefix = nr.varint() !== 0;
        else if (f === 4 && w === 0) normalizer.removeExtraWhitespaces = nr.varint() !== 0;
        else if (f === 5 && w === 0) normalizer.escapeWhitespaces = nr.varint() !== 0;
        else nr.skip(w);
      }
    } else {
      r.skip(wire);
    }
  }
  if (!pieces.length) throw new ModelError('SentencePiece model: no pieces (not a .model file?)');
  return { pieces, modelType, normalizer };
}

// ---------------------------------------------------------------- normaliser

/** The precompiled charsmap: a darts-clone double array over UTF-8 bytes and the replacement pool. */
class CharsMap {
  private readonly units: Uint32Array;
  private readonly pool: Uint8Array;

  constructor(blob: Uint8Array) {
    const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
    const trieSize = view.getUint32(0, true);
    if (trieSize + 4 > blob.length || trieSize % 4) throw new ModelError('SentencePiece model: bad precompiled charsmap');
    this.units = new Uint32Array(trieSize / 4);
    for (let i = 0; i < this.units.length; i++) this.units[i] = view.getUint32(4 + i * 4, true);
    this.pool = blob.subarray(4 + trieSize);
  }

  /** Longest prefix of bytes[from..] in the trie: [length, replacement bytes], or undefined. */
  longest(bytes: Uint8Array, from: number): [number, Uint8Array] | undefined {
    const u = this.units;
    const offset = (unit: number) => (unit >>> 10) << ((unit & (1 << 9)) >>> 6);
    const label = (unit: number) => unit & ((1 << 31) | 0xff);
    const hasLeaf = (unit: number) => ((unit >>> 8) & 1) === 1;
    const value = (unit: number) => unit & 0x7fffffff;
    let node = 0;
    let unit = u[node]!;
    node ^= offset(unit);
    let best: [number, number] | undefined;
    for (let i = from; i < bytes.length; i++) {
      const c = bytes[i]!;
      node ^= c;
      unit = u[node]!;
      if (unit === undefined || (label(unit) >>> 0) !== c) break;
      node ^= offset(unit);
      if (hasLeaf(unit)) best = [i - from + 1, value(u[node]!)];
    }
    if (!best) return undefined;
    let end = best[1];
    while (end < this.pool.length && this.pool[end] !== 0) end++;
    return [best[0], this.pool.subarray(best[1], end)];
  }
}

/** Length in bytes of the UTF-8 character starting with byte b (1 for an invalid lead byte). */
function utf8Len(b: number): number {
  if (b < 0x80) return 1;
  if (b >= 0xf0 && b < 0xf8) return 4;
  if (b >= 0xe0) return 3;
  if (b >= 0xc0) return 2;
  return 1;
}

const enc = new TextEncoder();
const SPACE_BYTES = enc.encode(SPACE_SYMBOL);
const REPLACEMENT = enc.encode('\ufffd');

export class SpmNormalizer {
  private readonly map: CharsMap | undefined;
  constructor(private readonly spec: SpmModel['normalizer']) {
    this.map = spec.precompiledCharsmap.length ? new CharsMap(spec.precompiledCharsmap) : undefined;
  }

  /** One normalised prefix of bytes[from..]: [consumed bytes, output bytes]. */
  private prefix(bytes: Uint8Array, from: number): [number, Uint8Array] {
    const hit = this.map?.longest(bytes, from);
    if (hit) return hit;
    const n = Math.min(utf8Len(bytes[from]!), bytes.length - from);
    const ch = bytes.subarray(from, from + n);
    // a malformed sequence becomes U+FFFD, one byte consumed (as the reference does)
    if (n > 1 && utf8.decode(ch) === '\ufffd') return [1, REPLACEMENT];
    if (n === 1 && bytes[from]! >= 0x80) return [1, REPLACEMENT];
    return [n, ch];
  }

  normalize(text: string): string {
    const input = enc.encode(text);
    const { removeExtraWhitespaces: rx, addDummyPrefix, escapeWhitespaces } = this.spec;
    const out: number[] = [];
    let pos = 0;
    if (rx) {
      while (pos < input.length) {
        const [n, s] = this.prefix(input, pos);
        if (!(s.length === 1 && s[0] === 0x20)) break;
        pos += n;
      }
    }
    if (pos >= input.length) return '';
    const pushSpace = () => (escapeWhitespaces ? out.push(...SPACE_BYTES) : out.push(0x20));
    if (addDummyPrefix) pushSpace();
    let prevSpace = rx;
    while (pos < input.length) {
      const [n, s0] = this.prefix(input, pos);
      let s = s0;
      if (prevSpace && rx) {
        let k = 0;
        while (k < s.length && s[k] === 0x20) k++;
        s = s.subarray(k);
      }
      if (s.length) {
        for (const b of s) {
          if (escapeWhitespaces && b === 0x20) out.push(...SPACE_BYTES);
          else out.push(b);
        }
        prevSpace = s[s.length - 1] === 0x20;
      }
      pos += n;
    }
    let result = utf8.decode(Uint8Array.from(out));
    if (rx) {
      const sp = escapeWhitespaces ? SPACE_SYMBOL : ' ';
      while (result.endsWith(sp)) result = result.slice(0, -sp.length);
    }
    return result;
  }
}

// ---------------------------------------------------------------- BPE

export class SentencePieceBpe {
  readonly model: SpmModel;
  readonly normalizer: SpmNormalizer;
  /** Piece -> index in the model, for pieces merges may produce (normal, user-defined, unused). */
  private readonly ids = new Map<string, number>();

  constructor(data: Uint8Array) {
    this.model = parseSpmModel(data);
    if (this.model.modelType !== 2) throw new ModelError(`SentencePiece model type ${this.model.modelType} is not BPE (2); this tokenizer reads BPE models only`);
    this.model.pieces.forEach((p, i) => {
      if (p.type === PIECE_TYPE.NORMAL || p.type === PIECE_TYPE.USER_DEFINED || p.type === PIECE_TYPE.UNUSED) this.ids.set(p.piece, i);
    });
    this.normalizer = new SpmNormalizer(this.model.normalizer);
  }

  /** Whether `piece` is a (mergeable) piece of the model. */
  has(piece: string): boolean {
    return this.ids.has(piece);
  }

  /** The pieces of `text` (SentencePieceProcessor.encode(text, out_type=str)). */
  encode(text: string): string[] {
    const norm = this.normalizer.normalize(text);
    if (!norm) return [];
    const chars = Array.from(norm);
    const sym = chars.map((c, i) => ({ piece: c, prev: i - 1, next: i + 1 < chars.length ? i + 1 : -1 }));
    // agenda: best score first, then leftmost; stale entries are skipped when popped
    interface Pair { left: number; right: number; piece: string; score: number }
    const heap: Pair[] = [];
    const better = (a: Pair, b: Pair) => a.score > b.score || (a.score === b.score && a.left < b.left);
    const push = (p: Pair) => {
      heap.push(p);
      let i = heap.length - 1;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!better(heap[i]!, heap[parent]!)) break;
        [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
        i = parent;
      }
    };
    const pop = (): Pair | undefined => {
      if (!heap.length) return undefined;
      const top = heap[0]!;
      const last = heap.pop()!;
      if (heap.length) {
        heap[0] = last;
        let i = 0;
        for (;;) {
          const l = 2 * i + 1;
          const r = l + 1;
          let m = i;
          if (l < heap.length && better(heap[l]!, heap[m]!)) m = l;
          if (r < heap.length && better(heap[r]!, heap[m]!)) m = r;
          if (m === i) break;
          [heap[i], heap[m]] = [heap[m]!, heap[i]!];
          i = m;
        }
      }
      return top;
    };
    const maybeAdd = (left: number, right: number) => {
      if (left < 0 || right < 0) return;
      const piece = sym[left]!.piece + sym[right]!.piece;
      const id = this.ids.get(piece);
      if (id === undefined) return;
      push({ left, right, piece, score: this.model.pieces[id]!.score });
    };
    for (let i = 1; i < sym.length; i++) maybeAdd(i - 1, i);
    for (let top = pop(); top; top = pop()) {
      const l = sym[top.left]!;
      const r = sym[top.right]!;
      if (!l.piece || !r.piece || l.piece + r.piece !== top.piece) continue;
      l.piece = top.piece;
      l.next = r.next;
      if (r.next >= 0) sym[r.next]!.prev = top.left;
      r.piece = '';
      maybeAdd(l.prev, top.left);
      maybeAdd(top.left, l.next);
    }
    const out: string[] = [];
    let prevUnknown = false;
    for (let i = 0; i >= 0 && i < sym.length; i = sym[i]!.next) {
      const p = sym[i]!.piece;
      const unknown = !this.ids.has(p);
      // a run of unknown symbols is one unknown piece (sentencepiece_processor.cc)
      if (unknown && prevUnknown) out[out.length - 1] += p;
      else out.push(p);
      prevUnknown = unknown;
    }
    return out;
  }

  /** Text of pieces (SentencePieceProcessor.decode_pieces). */
  decode(pieces: readonly string[]): string {
    let s = pieces.join('').replaceAll(SPACE_SYMBOL, ' ');
    if (this.model.normalizer.addDummyPrefix && s.startsWith(' ')) s = s.slice(1);
    return s;
  }
}
