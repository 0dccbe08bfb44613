/**
 * Words before which a subtitle line or block may break naturally in space-separated languages:
 * conjunctions, articles, relative pronouns and common prepositions. Keyed by ISO 639-1 code;
 * an unknown or absent language uses the union of all lists.
 */

const WORDS: Readonly<Record<string, string>> = {
  en: 'and but or nor so yet because although though while when where which who whom whose that if unless until since as than the a an to of in on at for with from by about into after before',
  es: 'y e o u ni pero sino porque aunque mientras cuando donde que quien cual si el la los las un una unos unas de del en con para por sobre sin hasta desde',
  fr: 'et ou mais donc car ni que qui quand lorsque si comme parce puisque le la les un une des de du en dans avec pour sur sans par vers',
  de: 'und oder aber denn sondern weil dass wenn als ob obwohl während der die das den dem des ein eine einen einem einer mit für von zu in auf aus bei nach',
  it: 'e ed o ma però perché che quando se mentre come il lo la i gli le un uno una di del della in con per su da tra fra',
  pt: 'e ou mas porque que quando se como enquanto embora o a os as um uma uns umas de do da em no na com para por sem',
  nl: 'en of maar want omdat dat als wanneer terwijl die dat de het een van in met voor op aan naar',
  ru: 'и а но или что чтобы когда если потому как который которая которые где в во на с со по для к о от до из за',
  uk: 'і й та а але або що щоб коли якщо бо як який яка які де в у на з із до для по від за',
  bg: 'и а но или че когато ако защото който която което които където в във на с със за от до по',
  pl: 'i a ale lub albo czy że bo gdy kiedy jeśli który która które gdzie w we na z ze do dla po od za',
  cs: 'a ale nebo že protože když jestli který která které kde v ve na s se do pro po od za',
  sk: 'a ale alebo že pretože keď ak ktorý ktorá ktoré kde v vo na s so do pre po od za',
  hr: 'i a ali ili da jer kad kada ako koji koja koje gdje u na s sa do za po od',
  ro: 'și sau dar ci că pentru când dacă care unde un o niște de în la cu pe din',
  sv: 'och eller men för att som när om där en ett den det de av i på med till från',
  da: 'og eller men for at som når hvis hvor en et den det de af i på med til fra',
  nb: 'og eller men for at som når hvis hvor en et ei den det de av i på med til fra',
  fi: 'ja tai mutta sekä että koska kun jos joka jotka missä',
  hu: 'és vagy de hogy mert amikor ha ami aki amely ahol a az egy',
  tr: 've veya ama fakat çünkü ki eğer bir ile için gibi',
  el: 'και ή αλλά ότι επειδή όταν αν που ο η το οι τα ένας μία ένα σε με για από',
  id: 'dan atau tetapi tapi karena bahwa ketika jika yang di ke dari dengan untuk',
  ms: 'dan atau tetapi kerana bahawa apabila jika yang di ke dari dengan untuk',
  vi: 'và hoặc nhưng vì rằng khi nếu mà của trong với cho',
  fil: 'at o pero dahil na kung ang ng sa mga',
  lt: 'ir ar bet nes kad kai jei kuris kuri kurie kur į iš su',
  ar: 'و أو لكن ثم لأن أن إن إذا عندما الذي التي الذين في من على إلى عن مع',
  ur: 'اور یا لیکن کہ کیونکہ جب اگر جو میں سے پر کو',
  he: 'ו או אבל כי כאשר אם אשר ש של ב מ על אל עם',
  hi: 'और या लेकिन पर कि क्योंकि जब अगर जो में से पर को के लिए',
  ta: 'மற்றும் அல்லது ஆனால் ஏனெனில் என்று',
  ko: '그리고 그러나 하지만 또는 그래서 왜냐하면',
};

const TABLE: ReadonlyMap<string, ReadonlySet<string>> = new Map(
  Object.entries(WORDS).map(([lang, list]) => [lang, new Set(list.split(' '))]),
);
const UNION: ReadonlySet<string> = new Set(Object.values(WORDS).flatMap((l) => l.split(' ')));

/** The break-word set for a language (ISO 639-1 or 639-3), or the union when unknown. */
export function breakWordsFor(language: string | undefined): ReadonlySet<string> {
  return (language !== undefined && TABLE.get(language)) || UNION;
}
