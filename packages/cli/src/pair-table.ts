/**
 * `dub doctor --pairs`: which ordered source -> target pairs of the contract run on this host and
 * which engine serves speech recognition, translation and speech synthesis of each, asked of the
 * pipeline's PairChecker (the registries and translators `dub run`, the API and the worker ask
 * before any work), not of a hand-kept list. Nothing loads a model: each stage answers from what
 * is installed (model files present, `apertium -l`, the configuration).
 *
 * A refused pair names the first stage that cannot run (the order `dub run` checks in: speech
 * recognition, translation, speech synthesis); refusals are grouped by their reason with the
 * locales taken out, and those a Debian apertium package would serve are counted per package.
 */
import { isSourceLocale, isTargetLocale, loadConfig, SOURCE_LOCALES, TARGET_LOCALES, ValidationError } from '@dub/core';
import type { PairChecker, PairStage } from '@dub/pipeline';

export interface PairRow {
  source: string;
  target: string;
  served: boolean;
  /** Engine per stage where served (translation `none`: one language, passed through). */
  asr?: string;
  translation?: string;
  /** apertium's modes for the pair, in order (one, or two through Spanish). */
  route?: string[];
  tts?: string;
  /** Where refused: the first stage that cannot run, what is missing and the fix. */
  stage?: PairStage;
  missing?: string;
  fix?: string;
}

export interface RefusalGroup {
  stage: PairStage;
  /** The reason with the pair's locales replaced by SOURCE and TARGET. */
  reason: string;
  count: number;
  /** The pairs, `src>tgt`. */
  pairs: string[];
}

export interface PairTable {
  /** Ordered pairs of a contract source and a different contract target locale (1,370). */
  total: number;
  served: number;
  refused: number;
  /** Served pairs per engine combination, `asr + translation + tts`. */
  servedBy: Record<string, number>;
  refusals: RefusalGroup[];
  /** Refused pairs that installing these Debian apertium packages would let translation serve. */
  apertiumPackages: { packages: string[]; count: number; pairs: string[] }[];
  rows: PairRow[];
}

/** The contract's ordered pairs (a source and a different target locale), optionally filtered. */
export function contractPairs(from?: string, to?: string): [string, string][] {
  const out: [string, string][] = [];
  for (const s of SOURCE_LOCALES) {
    if (from && s !== from) continue;
    for (const t of TARGET_LOCALES) if (t !== s && (!to || t === to)) out.push([s, t]);
  }
  return out;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The reason of a refusal with its locales and the installed-mode list taken out, to group by. */
export function groupReason(missing: string, source: string, target: string): string {
  return missing
    .replace(/ \(installed: [^)]*\)/g, '')
    .replace(/Debian's (apertium-[a-z-]+)( and apertium-[a-z-]+)* would serve it/, "a Debian apertium package would serve it")
    .replace(new RegExp(`(?<![\\w-])${escape(source)}(?![\\w-])`, 'g'), 'SOURCE')
    .replace(new RegExp(`(?<![\\w-])${escape(target)}(?![\\w-])`, 'g'), 'TARGET');
}

/** The Debian packages an apertium fix names (`apt-get install -y apertium-x apertium-y (...)`). */
export function packagesOfFix(fix: string | undefined): string[] {
  const m = /apt-get install -y ((?:apertium[a-z-]*\s?)+)/.exec(fix ?? '');
  return m ? m[1]!.trim().split(/\s+/) : [];
}

export async function pairTable(checker: PairChecker, pairs: [string, string][] = contractPairs(), routeOf?: (s: string, t: string) => Promise<string[] | undefined>): Promise<PairTable> {
  const caps = await checker.capabilities();
  const rows: PairRow[] = [];
  for (const [source, target] of pairs) {
    const r = await checker.check({ source, targets: [{ locale: target }] });
    if (r) {
      rows.push({ source, target, served: false, stage: r.stage, missing: r.missing, fix: r.fix });
      continue;
    }
    const translation = caps.pairs[`${source}>${target}`];
    const route = translation === 'apertium' && routeOf ? await routeOf(source, target) : undefined;
    rows.push({ source, target, served: true, asr: caps.sources[source], translation, ...(route ? { route } : {}), tts: caps.targets[target] });
  }
  const servedBy: Record<string, number> = {};
  const groups = new Map<string, RefusalGroup>();
  const byPackages = new Map<string, { packages: string[]; count: number; pairs: string[] }>();
  for (const row of rows) {
    const pair = `${row.source}>${row.target}`;
    if (row.served) {
      const k = `${row.asr} + ${row.translation} + ${row.tts}`;
      servedBy[k] = (servedBy[k] ?? 0) + 1;
      continue;
    }
    const reason = groupReason(row.missing!, row.source, row.target);
    const key = `${row.stage}|${reason}`;
    const g = groups.get(key) ?? { stage: row.stage!, reason, count: 0, pairs: [] };
    g.count++;
    g.pairs.push(pair);
    groups.set(key, g);
    const pkgs = row.stage === 'translation' ? packagesOfFix(row.fix).sort() : [];
    if (pkgs.length) {
      const p = byPackages.get(pkgs.join(' ')) ?? { packages: pkgs, count: 0, pairs: [] };
      p.count++;
      p.pairs.push(pair);
      byPackages.set(pkgs.join(' '), p);
    }
  }
  const served = rows.filter((r) => r.served).length;
  return {
    total: rows.length,
    served,
    refused: rows.length - served,
    servedBy,
    refusals: [...groups.values()].sort((a, b) => b.count - a.count),
    apertiumPackages: [...byPackages.values()].sort((a, b) => b.count - a.count),
    rows,
  };
}

const examples = (pairs: string[], n = 4) => pairs.slice(0, n).map((p) => p.replace('>', ' -> ')).join(', ') + (pairs.length > n ? `, ... (${pairs.length - n} more)` : '');

/** The table as text: the served pairs with their engines, then the refusals by reason, then the counts. */
export function formatPairTable(t: PairTable): string {
  const out: string[] = [];
  out.push(`dub doctor --pairs: ${t.total} ordered source -> target pairs of the contract checked on this host`, '');
  out.push(`served (${t.served}):`);
  if (t.served) out.push(`  ${'source'.padEnd(7)} ${'target'.padEnd(7)} ${'speech recognition'.padEnd(19)} ${'translation'.padEnd(36)} speech synthesis`);
  for (const r of t.rows.filter((x) => x.served)) {
    const tr = r.route ? `${r.translation} (${r.route.join(' then ')})` : r.translation === 'none' ? 'none (one language)' : r.translation!;
    out.push(`  ${r.source.padEnd(7)} ${r.target.padEnd(7)} ${r.asr!.padEnd(19)} ${tr.padEnd(36)} ${r.tts}`);
  }
  out.push('', `refused (${t.refused}), by the first stage that cannot run:`);
  for (const g of t.refusals) out.push(`  ${String(g.count).padStart(5)}  ${g.stage}: ${g.reason}`, `         e.g. ${examples(g.pairs)}`);
  if (t.apertiumPackages.length) {
    out.push('', 'refused pairs a Debian apertium package would let translation serve (apt-get install -y ...):');
    for (const p of t.apertiumPackages) out.push(`  ${String(p.count).padStart(5)}  ${p.packages.join(' ')}: ${examples(p.pairs, 3)}`);
    const all = [...new Set(t.apertiumPackages.flatMap((p) => p.packages))].sort();
    out.push(`  ${String(t.apertiumPackages.reduce((n, p) => n + p.count, 0)).padStart(5)}  all of them: apt-get install -y ${all.join(' ')}`);
  }
  out.push('', `summary: ${t.served} of ${t.total} pairs served here, ${t.refused} refused${t.refused ? ` (${summaryOfStages(t)})` : ''}`);
  out.push(`  served by: ${Object.entries(t.servedBy).sort((a, b) => b[1] - a[1]).map(([k, n]) => `${n} ${k}`).join('; ') || 'nothing'}`);
  return out.join('\n') + '\n';
}

function summaryOfStages(t: PairTable): string {
  const by = new Map<string, number>();
  for (const g of t.refusals) by.set(g.stage, (by.get(g.stage) ?? 0) + g.count);
  return [...by.entries()].map(([s, n]) => `${n} at ${s}`).join(', ');
}

/** `dub doctor --pairs [--from L] [--to L] [--json]`: exit 0 (the table is the answer, whatever it says). */
export async function doctorPairs(o: { from?: string | undefined; to?: string | undefined; json?: boolean | undefined }): Promise<number> {
  if (o.from && !isSourceLocale(o.from)) throw new ValidationError(`--from ${o.from} is not a supported source locale`, { field: 'from' });
  if (o.to && !isTargetLocale(o.to)) throw new ValidationError(`--to ${o.to} is not a supported target locale`, { field: 'to' });
  const [{ PairChecker, engineChoiceFromEnv }, { createTranslator, loadTranslateConfig }] = await Promise.all([import('@dub/pipeline'), import('@dub/translate')]);
  const config = loadConfig();
  const translate = loadTranslateConfig(process.env);
  const checker = new PairChecker({ modelsDir: config.modelsDir, device: config.device, choice: engineChoiceFromEnv(process.env), translate });
  // apertium's modes per pair (the route its translator would run), for the table only
  const apertium = (await createTranslator('apertium', translate).catch(() => undefined)) as import('@dub/translate').ApertiumTranslator | undefined;
  const routeOf = async (s: string, t: string) => (await apertium?.route(s, t).catch(() => undefined))?.map((m) => m.name);
  const table = await pairTable(checker, contractPairs(o.from, o.to), routeOf);
  process.stdout.write(o.json ? JSON.stringify(table, null, 2) + '\n' : formatPairTable(table));
  return 0;
}
