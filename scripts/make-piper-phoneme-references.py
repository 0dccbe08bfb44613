#!/usr/bin/env python3
"""Write the expected Piper phoneme ids of a sentence set (packages/voice/fixtures/piper-phoneme-references.json).

    python3 scripts/make-piper-phoneme-references.py

An implementation independent of packages/voice/src/engines/piper-phonemes.ts: it calls
libespeak-ng's own espeak_TextToPhonemes (the library function Piper calls, through ctypes) on the
whole text, clause by clause, so espeak-ng itself decides where each clause ends, and then applies
Piper's documented rules (piper-phonemize src/phonemize.cpp and src/phoneme_ids.cpp,
https://github.com/rhasspy/piper-phonemize):

- the clause terminator: the punctuation that ends the clause's text (the first of a run such as
  "?!"), mapped as Piper maps espeak-ng's clause types: "." "?" "!" end a sentence and are kept,
  "," ":" ";" (and dashes, a semicolon clause) are kept followed by a space, ellipsis and inverted
  marks add nothing; the end of the text ends a sentence;
- the clause's IPA decomposed to NFD, mapped with DEFAULT_PHONEME_MAP ("pt-br": c -> k),
  language-switch flags "(xx)" removed;
- ids: BOS "^", pad "_", every phoneme followed by pad, EOS "$", through Piper's
  DEFAULT_PHONEME_ID_MAP (packages/voice/fixtures/piper-default-phoneme-id-map.json, taken from
  piper-phonemize src/phoneme_ids.hpp); phonemes without an id are skipped.

espeak_TextToPhonemes leaves the text pointer one character past the start of the next clause
(espeak-ng keeps that character in its own look-ahead), so a clause's text is the text from its
start to one character before the pointer.
"""
import ctypes
import json
import os
import subprocess
import unicodedata

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, 'packages', 'voice', 'fixtures')

SENTENCES = [
    ('en-us', 'It costs 3.5 dollars, or 1,200 cents.'),
    ('en-us', 'The train leaves at 10:30 p.m. tomorrow.'),
    ('en-us', 'Dr. Smith lives on Baker St. in London.'),
    ('en-us', 'We ate croissants and sushi at the café, e.g. on Friday!'),
    ('en-us', 'Really? Yes; no: maybe.'),
    ('es', 'Cuesta 1.200 euros, o 3,5 millones.'),
    ('es', 'Son las 10:30, ¿vale?'),
    ('es', 'El Sr. García juega al fútbol y escucha rock.'),
    ('es', '¡Hola! Me gusta el software libre.'),
    ('fr', 'Le football est génial.'),
    ('fr', 'Il est 10:30, et ça coûte 3,5 euros.'),
    ('fr', 'M. Dupont aime le week-end et le jazz !'),
    ('de', 'Der Computer und das Team spielen Fußball.'),
    ('de', 'Es kostet 1.200,50 Euro, um 10:30 Uhr.'),
    ('de', 'Am 3. Oktober sagt Dr. Müller: Hallo.'),
    ('pt-br', 'O computador custa 1.200 reais.'),
    ('pt-br', 'São 10:30, certo? Você gosta de futebol?'),
    ('pt-br', 'O Sr. Silva disse: que show incrível!'),
]

# Clause punctuation: character -> (what Piper appends, whether it ends a sentence)
TERMINATORS = {
    '.': ('.', True), '?': ('?', True), '!': ('!', True),
    ',': (', ', False), ':': (': ', False), ';': ('; ', False),
    '\u2013': ('; ', False), '\u2014': ('; ', False),
    '\u2026': ('', False), '\u00a1': ('', False), '\u00bf': ('', False),
}
PHONEME_MAPS = {'pt-br': {'c': 'k'}}


def load_espeak():
    lib = ctypes.CDLL('libespeak-ng.so.1')
    lib.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
    lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
    lib.espeak_TextToPhonemes.restype = ctypes.c_char_p
    lib.espeak_TextToPhonemes.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, ctypes.c_int]
    if lib.espeak_Initialize(2, 0, None, 0) < 0:  # AUDIO_OUTPUT_SYNCHRONOUS
        raise SystemExit('espeak_Initialize failed')
    return lib


def clauses(lib, voice, text):
    """[(ipa, clause text, at end of text)] as espeak-ng reads them."""
    if lib.espeak_SetVoiceByName(voice.encode()) != 0:
        raise SystemExit(f'no espeak-ng voice {voice}')
    raw = text.encode('utf-8')
    buf = ctypes.create_string_buffer(raw)
    base = ctypes.addressof(buf)
    ptr = ctypes.c_void_p(base)
    out = []
    start = 0
    while ptr.value is not None:
        ipa = lib.espeak_TextToPhonemes(ctypes.byref(ptr), 1, 0x02).decode('utf-8')  # espeakCHARS_UTF8, IPA
        if ptr.value is None:
            out.append((ipa, raw[start:].decode('utf-8'), True))
            break
        end = ptr.value - base
        back = end - 1
        while (raw[back] & 0xC0) == 0x80:  # the look-ahead character may be several bytes
            back -= 1
        out.append((ipa, raw[start:back].decode('utf-8'), False))
        start = back
    return out


def terminator(clause_text, at_end):
    t = clause_text.rstrip()
    run = ''
    while t and t[-1] in TERMINATORS:
        run = t[-1] + run
        t = t[:-1]
    has_alnum = any(ch.isalnum() for ch in t)
    if run and has_alnum:
        punct, sentence = TERMINATORS[run[0]]
        return punct, sentence or at_end
    return '', at_end


def piper_phonemes(ipa, voice):
    mapping = PHONEME_MAPS.get(voice, {})
    out, in_flag = [], False
    for ch in unicodedata.normalize('NFD', ipa):
        for m in mapping.get(ch, ch):
            if in_flag:
                if m == ')':
                    in_flag = False
            elif m == '(':
                in_flag = True
            else:
                out.append(m)
    return ''.join(out)


def ids(phonemes, id_map):
    result = id_map['^'] + id_map['_']
    for ch in phonemes:
        if ch in id_map:
            result += id_map[ch] + id_map['_']
    return result + id_map['$']


def main():
    with open(os.path.join(FIXTURES, 'piper-default-phoneme-id-map.json'), encoding='utf-8') as f:
        id_map = json.load(f)['phoneme_id_map']
    lib = load_espeak()
    version = subprocess.run(['espeak-ng', '--version'], capture_output=True, text=True).stdout.strip()
    entries = []
    for voice, text in SENTENCES:
        sentences, cur = [], ''
        for ipa, clause_text, at_end in clauses(lib, voice, text):
            punct, sentence = terminator(clause_text, at_end)
            cur += piper_phonemes(ipa, voice) + punct
            if sentence:
                if cur:
                    sentences.append(cur)
                cur = ''
        if cur:
            sentences.append(cur)
        entries.append({'voice': voice, 'text': text, 'phonemes': sentences, 'ids': [ids(s, id_map) for s in sentences]})
    doc = {
        'description': 'Expected Piper phoneme ids: libespeak-ng espeak_TextToPhonemes clause by clause, then piper-phonemize rules; made by scripts/make-piper-phoneme-references.py',
        'espeak_ng': version,
        'sources': [
            'https://github.com/rhasspy/piper-phonemize/blob/master/src/phonemize.cpp',
            'https://github.com/rhasspy/piper-phonemize/blob/master/src/phoneme_ids.cpp',
            'https://github.com/rhasspy/piper-phonemize/blob/master/src/phoneme_ids.hpp',
        ],
        'entries': entries,
    }
    with open(os.path.join(FIXTURES, 'piper-phoneme-references.json'), 'w', encoding='utf-8') as f:
        json.dump(doc, f, ensure_ascii=False, indent=1)
        f.write('\n')
    print(f'{len(entries)} entries, {version}')


if __name__ == '__main__':
    main()
