/**
 * The Debian 12 (bookworm) apertium language pair packages that connect the contract's locales,
 * directly or through Spanish, and the translation modes each installs. The modes were read from
 * the packages themselves (`apt-get install -y <pkg>` then `dpkg -L <pkg>` and `apertium -l`,
 * 2026-11-26, Debian 12 versions below), not from their descriptions: apertium-es-ro, for one,
 * installs only ro -> es.
 *
 * Packages Debian ships that connect no contract locale are left out: Catalan, Galician,
 * Asturian, Aragonese, Occitan, Esperanto, Basque, Breton, Arpitan, Sardinian, Silesian,
 * Icelandic, Macedonian, Belarusian, Slovenian, Afrikaans pairs, and apertium-nno-nob (Nynorsk <->
 * Bokmål: Nynorsk is not a contract locale).
 *
 * `dub doctor` names the package(s) a pair needs from this table (apertiumPackagesFor).
 */
import { findRoute, parseModeName, type ApertiumMode } from './apertium-modes.js';

export interface ApertiumPackage {
  /** Debian package name. */
  package: string;
  /** Debian 12 version the modes were read from. */
  version: string;
  /** Translation modes it installs (as `apertium -l` lists them). */
  modes: readonly string[];
  /** Installed size, kB (apt-cache show). */
  installedKb: number;
}

export const APERTIUM_PACKAGES: readonly ApertiumPackage[] = Object.freeze([
  { package: 'apertium-eng-spa', version: '0.8.1-2', modes: ['eng-spa', 'spa-eng', 'spa-eng_US'], installedKb: 5467 },
  { package: 'apertium-es-pt', version: '1.1.6-1', modes: ['es-pt', 'es-pt_BR', 'pt-es'], installedKb: 2915 },
  { package: 'apertium-fr-es', version: '0.9.4-1', modes: ['es-fr', 'fr-es'], installedKb: 7284 },
  { package: 'apertium-spa-ita', version: '0.2.1-3', modes: ['ita-spa', 'spa-ita'], installedKb: 4033 },
  { package: 'apertium-es-ro', version: '0.7.5-1', modes: ['ro-es'], installedKb: 2954 },
  { package: 'apertium-hbs-eng', version: '0.5.1-2', modes: ['eng-hbs', 'eng-hbs_BS', 'eng-hbs_HR', 'eng-hbs_SR', 'hbs-eng'], installedKb: 5185 },
  { package: 'apertium-dan-nor', version: '1.5.0-2', modes: ['dan-nno', 'dan-nob', 'nno-dan', 'nob-dan'], installedKb: 14137 },
  { package: 'apertium-swe-dan', version: '0.8.1-3', modes: ['dan-swe', 'swe-dan'], installedKb: 8382 },
  { package: 'apertium-swe-nor', version: '0.4.0-1', modes: ['nno-swe', 'nob-swe', 'swe-nno', 'swe-nob'], installedKb: 18239 },
  { package: 'apertium-ind-zlm', version: '0.1.2-3', modes: ['ind-zlm', 'zlm-ind'], installedKb: 891 },
  { package: 'apertium-rus-ukr', version: '0.2.1-4', modes: ['rus-ukr', 'ukr-rus'], installedKb: 5034 },
  { package: 'apertium-urd-hin', version: '0.1.0~r64379-4', modes: ['hin-urd', 'urd-hin'], installedKb: 718 },
]);

/** The package that installs mode `name`, if the table knows one. */
export function packageOfMode(name: string): string | undefined {
  return APERTIUM_PACKAGES.find((p) => p.modes.includes(name))?.package;
}

const TABLE_MODES: readonly ApertiumMode[] = APERTIUM_PACKAGES.flatMap((p) => p.modes.map((m) => parseModeName(m)!));

export interface PackageAdvice {
  /** The modes the pair would run through once installed (one, or two through the pivot). */
  route: string[];
  /** The Debian packages to install (those of the route's modes not installed yet), in route order. */
  packages: string[];
}

/**
 * The Debian apertium packages that would make apertium serve `source -> target`, given the
 * modes installed now: undefined when no package of the table (with what is installed) does.
 * `packages` is empty when the installed modes already serve the pair.
 */
export function apertiumPackagesFor(installed: readonly ApertiumMode[], sourceLocale: string, targetLocale: string, pivot = 'spa'): PackageAdvice | undefined {
  const have = new Set(installed.map((m) => m.name));
  const all = [...installed, ...TABLE_MODES.filter((m) => !have.has(m.name))];
  const route = findRoute(all, sourceLocale, targetLocale, pivot);
  if (!route) return undefined;
  const packages: string[] = [];
  for (const m of route) {
    if (have.has(m.name)) continue;
    const p = packageOfMode(m.name);
    if (p && !packages.includes(p)) packages.push(p);
  }
  return { route: route.map((m) => m.name), packages };
}

