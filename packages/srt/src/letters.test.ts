/**
 * Legacy-encoded SRTs read with the language known (`language`: the asset's or version's locale):
 * where chardet cannot tell the code pages apart, the reading written with the language's own
 * letters (CLDR exemplar characters, letters.ts) is taken. Ordinary sentences in each language,
 * saved in the code page files in that language were commonly saved in. The letter tables come
 * from CLDR, not from these files. The second group was written after the code; one of its cases
 * (hr-HR: chardet sure of windows-1252, which reads "ć" as "æ") led to one change: a best guess
 * written in letters the language does not use is checked against the other readings too.
 */
import { describe, expect, it } from 'vitest';
import { fitsLanguage, legacyEncodings } from './letters.js';
import { readSrt } from './read.js';

/** Encode text in a single- or multi-byte legacy encoding by inverting TextDecoder (single-byte) or a per-character search (multi-byte). */
function encode(label: string, text: string): Uint8Array {
  const d = new TextDecoder(label, { fatal: false });
  const single = new Map<string, number>();
  for (let b = 0; b < 256; b++) {
    const c = d.decode(Uint8Array.of(b));
    if (c.length === 1 && c !== '\ufffd' && !single.has(c)) single.set(c, b);
  }
  const out: number[] = [];
  for (const ch of text) {
    const s = single.get(ch);
    if (s !== undefined) {
      out.push(s);
      continue;
    }
    let found: number[] | undefined;
    for (let a = 0x81; a <= 0xfe && !found; a++) {
      for (let b = 0x40; b <= 0xfe; b++) {
        if (d.decode(Uint8Array.of(a, b)) === ch) {
          found = [a, b];
          break;
        }
      }
    }
    if (!found) throw new Error(`${label} has no ${ch}`);
    out.push(...found);
  }
  return Uint8Array.from(out);
}

function srtOf(lines: string[]): string {
  return lines.map((l, i) => `${i + 1}\r\n00:00:${String(i * 2).padStart(2, '0')},000 --> 00:00:${String(i * 2 + 1).padStart(2, '0')},500\r\n${l}\r\n`).join('\r\n');
}

const FIRST: [string, string, string[]][] = [
  ['fr-FR', 'windows-1252', ['Ça va très bien, merci.', 'À bientôt ! Où est la gare ?', 'Il était déjà là-bas, près du théâtre.']],
  ['pl-PL', 'windows-1250', ['Zażółć gęślą jaźń.', 'Łódź jest dużym miastem, ale Kraków też.', 'Dziękuję bardzo.']],
  ['hu-HU', 'windows-1250', ['Árvíztűrő tükörfúrógép.', 'Köszönöm szépen, jó éjszakát.', 'Hová mész?']],
  ['ru-RU', 'windows-1251', ['Съешь же ещё этих мягких французских булок, да выпей чаю.', 'Доброе утро.', 'Спасибо большое.']],
  ['ro-RO', 'windows-1250', ['Mulţumesc, ne vedem mâine în oraş.', 'Bună ziua, ce mai faceţi?', 'Şi eu.']],
  ['tr-TR', 'windows-1254', ['Günaydın, nasılsınız?', "Şimdi İstanbul'a gidiyorum, çok güzel.", 'Teşekkür ederim.']],
  ['el-GR', 'windows-1253', ['Καλημέρα, τι κάνετε;', 'Ευχαριστώ πολύ.', 'Τα λέμε αύριο.']],
];

const HELD_OUT: [string, string, string[]][] = [
  ['uk-UA', 'windows-1251', ['Добрий день, як справи?', 'Їжак сидить під ялинкою.', 'Дякую, все гаразд.']],
  ['bg-BG', 'windows-1251', ['Добър ден, как сте?', 'Благодаря, много съм добре.', 'Ще се видим утре.']],
  ['sk-SK', 'windows-1250', ['Ďakujem, mám sa dobre.', 'Kôň skáče cez plot.', 'Ľudia čakajú na vlak.']],
  ['hr-HR', 'windows-1250', ['Dobar dan, kako ste?', 'Hvala, dobro sam, a vi?', 'Vidimo se sutra u šest, ćao.']],
  ['lt-LT', 'windows-1257', ['Labas rytas, kaip sekasi?', 'Ačiū, gerai. Šiandien šilta.', 'Iki pasimatymo, žmonės.']],
  ['sv-SE', 'windows-1252', ['Hej, hur mår du?', 'Jag är på väg till stationen.', 'Vi ses på måndag.']],
  ['da-DK', 'windows-1252', ['Godmorgen, hvordan går det?', 'Jeg går til søen i løbet af dagen.', 'På gensyn.']],
  ['he-IL', 'windows-1255', ['שלום, מה שלומך?', 'תודה רבה, הכול בסדר.', 'נתראה מחר.']],
  ['ar-AE', 'windows-1256', ['مرحبا، كيف حالك؟', 'شكرا جزيلا، أنا بخير.', 'أراك غدا.']],
  ['ja-JP', 'shift_jis', ['こんにちは、お元気ですか。', '駅はどこですか。', 'また明日会いましょう。']],
  ['zh-CN', 'gb18030', ['你好，最近怎么样？', '谢谢，我很好。', '我们明天见。']],
];

describe('legacy-encoded SRTs read with their language known', () => {
  for (const [group, cases] of [['written with the code', FIRST], ['held out', HELD_OUT]] as const) {
    for (const [locale, label, lines] of cases) {
      it(`${group}: ${locale} in ${label} reads as written`, () => {
        const bytes = encode(label, srtOf(lines));
        const r = readSrt(bytes, { language: locale });
        expect(r.cues.map((c) => c.text)).toEqual(lines);
      });
    }
  }

  it('a French windows-1252 file chardet cannot tell from ISO-8859-2 and windows-1257: refused alone, read with fr-FR, refused with cs-CZ', () => {
    const lines = ['Ça va très bien, merci.', 'À bientôt !'];
    const bytes = encode('windows-1252', srtOf(lines));
    expect(() => readSrt(bytes)).toThrow(/the encoding cannot be told: windows-1252 .* read it differently.*fix: save the file as UTF-8/);
    const r = readSrt(bytes, { language: 'fr-FR' });
    expect(r.cues.map((c) => c.text)).toEqual(lines);
    expect(r.encoding).toBe('windows-1252');
    expect(r.notes.find((n) => n.kind === 'decoded')?.message).toMatch(/^decoded as windows-1252 \(chosen by the letters of fr-FR/);
    // Czech is not written with è and à; no reading writes this file in Czech letters: still refused
    expect(() => readSrt(bytes, { language: 'cs-CZ' })).toThrow(/cannot be told/);
  });

  it('without the language a short file can read wrong: Croatian "ć" as windows-1252 "æ"; with hr-HR it reads right', () => {
    const lines = ['Vidimo se sutra u šest, ćao.'];
    const bytes = encode('windows-1250', srtOf(lines));
    expect(readSrt(bytes).cues[0]!.text).toBe('Vidimo se sutra u šest, æao.');
    expect(readSrt(bytes, { language: 'hr-HR' }).cues[0]!.text).toBe(lines[0]);
  });

  it('a file that mixes UTF-8 with windows-1252 stays refused with the language given', () => {
    const bytes = Uint8Array.from([...encode('windows-1252', srtOf(['Très bien.'])), ...new TextEncoder().encode('\r\n2\r\n00:00:05,000 --> 00:00:06,000\r\nDéjà vu.\r\n')]);
    expect(() => readSrt(bytes, { language: 'fr-FR' })).toThrow(/mixes two encodings/);
  });
});

describe('fitsLanguage', () => {
  it('Latin languages: their own letters pass, others fail; ASCII and punctuation always pass', () => {
    expect(fitsLanguage('Où est la gare ? « Déjà » — 3,5 €', 'fr-FR')).toBe(true);
    expect(fitsLanguage('trčs bien', 'fr')).toBe(false);
    expect(fitsLanguage('Zażółć gęślą jaźń', 'pl-PL')).toBe(true);
    expect(fitsLanguage('Zażółć', 'de-DE')).toBe(false);
    expect(fitsLanguage('İstanbul ılık', 'tr-TR')).toBe(true);
    expect(fitsLanguage('Großes Haus', 'nb-NO')).toBe(false);
    expect(fitsLanguage('blåbær', 'no')).toBe(true);
  });

  it('other scripts: the script itself; Cyrillic and Greek words never have a small letter before a capital', () => {
    expect(fitsLanguage('Доброе утро, Anna.', 'ru-RU')).toBe(true);
    expect(fitsLanguage('сЪЕШЬ ЖЕ', 'ru-RU')).toBe(false);
    expect(fitsLanguage('Καλημέρα', 'el-GR')).toBe(true);
    expect(fitsLanguage('Καλημέρα', 'ru-RU')).toBe(false);
    expect(fitsLanguage('こんにちは、駅', 'ja-JP')).toBe(true);
    expect(fitsLanguage('こんにちは', 'zh-CN')).toBe(false);
  });

  it('no verdict for a language without a table; legacy encodings per language', () => {
    expect(fitsLanguage('Xin chào', 'vi-VN')).toBeUndefined();
    expect(legacyEncodings('ru-RU')).toEqual(['windows-1251', 'koi8-r', 'iso-8859-5']);
    expect(legacyEncodings('xx')).toEqual([]);
  });
});
