/**
 * apertium: rule-based offline translation from Debian packages (the default engine). en <-> es
 * comes from apertium-eng-spa; other installed pairs are found from `apertium -l`, and a pair with
 * no direct mode is routed through Spanish when both legs exist. A batch is one process call per
 * leg (see apertium-markup.ts for the segment markers and the unknown-word marks).
 */
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { EngineUnavailableError, ProcessError, retryingOnce, type DubError } from '@dub/core';
import { runProcess } from '@dub/media';
import { BaseTranslator, resolveBaseOptions, type BaseTranslatorOptions, type BatchCall, type TranslateBatch } from '../base-translator.js';
import type { PairSupport, TranslatedSegment } from '../types.js';
import { decodeBatch, encodeBatch, stripUnknownMarks } from './apertium-markup.js';
import { findRoute, parseModeList, parseModeName, type ApertiumMode } from './apertium-modes.js';
import { apertiumPackagesFor } from './apertium-packages.js';

export interface ApertiumOptions extends BaseTranslatorOptions {
  /** The apertium command (default "apertium"). */
  bin?: string;
  /** Linguistic data directory passed as `-d` (default: the system's, /usr/share/apertium). */
  dataDir?: string;
  /** Pivot language code for pairs without a direct mode (default "spa"). */
  pivot?: string;
  /** Where the batch input file is written (default the OS temp dir). */
  tmpDir?: string;
}

interface ResolvedApertium {
  bin: string;
  dataDir: string | undefined;
  pivot: string;
  tmpDir: string;
}

const SYSTEM_MODES_DIR = '/usr/share/apertium/modes';

export class ApertiumTranslator extends BaseTranslator {
  readonly id = 'apertium';
  readonly label = 'Apertium';
  private readonly cfg: ResolvedApertium;

  constructor(opts: ApertiumOptions = {}) {
    super(resolveBaseOptions(opts, { timeoutMs: 120_000, batch: { maxSegments: 500, maxChars: 60_000 } }));
    this.cfg = { bin: opts.bin ?? 'apertium', dataDir: opts.dataDir, pivot: opts.pivot ?? 'spa', tmpDir: opts.tmpDir ?? os.tmpdir() };
  }

  /** Installed translation modes (listed once per translator; a failed listing is retried next call). */
  readonly installedModes: () => Promise<ApertiumMode[]> = retryingOnce(() => this.listModes());

  private async listModes(): Promise<ApertiumMode[]> {
    try {
      const r = await runProcess(this.cfg.bin, [...this.dataArgs(), '-l'], { timeoutMs: 15_000 });
      return parseModeList(r.stdout.toString('utf8'));
    } catch (e) {
      if ((e as DubError).code === 'engine_unavailable') throw e;
      // Older apertium without -l: read the modes directory.
      const dir = this.cfg.dataDir ? path.join(this.cfg.dataDir, 'modes') : SYSTEM_MODES_DIR;
      const files = await readdir(dir).catch(() => [] as string[]);
      return files.filter((f) => f.endsWith('.mode')).map((f) => parseModeName(f.slice(0, -5))).filter((m): m is ApertiumMode => !!m);
    }
  }

  private dataArgs(): string[] {
    return this.cfg.dataDir ? ['-d', this.cfg.dataDir] : [];
  }

  /** The modes a pair runs through (one, or two via the pivot), or undefined. */
  async route(sourceLocale: string, targetLocale: string): Promise<ApertiumMode[] | undefined> {
    return findRoute(await this.installedModes(), sourceLocale, targetLocale, this.cfg.pivot);
  }

  async supports(sourceLocale: string, targetLocale: string): Promise<PairSupport> {
    let modes: ApertiumMode[];
    try {
      modes = await this.installedModes();
    } catch (e) {
      const advice = apertiumPackagesFor([], sourceLocale, targetLocale, this.cfg.pivot);
      const fix = `apt-get install -y apertium ${advice ? advice.packages.join(' ') : 'apertium-eng-spa'}`;
      return {
        supported: false,
        reason: `apertium is not usable (${(e as Error).message}); install it (${fix})${advice ? '' : `: no Debian apertium package translates ${sourceLocale} -> ${targetLocale}`}`,
        ...(advice ? { fix: `${fix} (${advice.route.join(' then ')})` } : {}),
      };
    }
    if (findRoute(modes, sourceLocale, targetLocale, this.cfg.pivot)) return { supported: true };
    // The Debian packages that would serve it (apertium-packages.ts); they install into the system's data directory.
    const advice = apertiumPackagesFor(modes, sourceLocale, targetLocale, this.cfg.pivot);
    const where = this.cfg.dataDir ? `, into /usr/share/apertium: unset DUB_TRANSLATE_APERTIUM_DATA_DIR or copy its modes to ${this.cfg.dataDir}` : '';
    const fix = advice?.packages.length ? `apt-get install -y ${advice.packages.join(' ')} (Debian; apertium then runs ${advice.route.join(' then ')}${advice.route.length > 1 ? ', through Spanish' : ''}${where})` : undefined;
    return {
      supported: false,
      reason: `apertium has no ${sourceLocale} -> ${targetLocale} direction (installed: ${modes.map((m) => m.name).join(', ') || 'none'}); ${fix ? `Debian's ${advice!.packages.join(' and ')} would serve it` : 'no Debian apertium package serves it (directly or through Spanish): choose another engine'}`,
      ...(fix ? { fix } : {}),
    };
  }

  protected async translateBatch(batch: TranslateBatch, call: BatchCall): Promise<TranslatedSegment[]> {
    const route = await this.route(batch.sourceLocale, batch.targetLocale);
    if (!route) throw new EngineUnavailableError(`apertium cannot translate ${batch.sourceLocale} -> ${batch.targetLocale}`);
    let texts = batch.segments.map((s) => s.text);
    // The input goes through a file: apertium's format detection fails on a socket stdin, which
    // is what Node gives a child for piped input.
    const dir = await mkdtemp(path.join(this.cfg.tmpDir, 'dub-apertium-'));
    try {
      for (const [leg, mode] of route.entries()) {
        const input = path.join(dir, `leg-${leg}.html`);
        await writeFile(input, encodeBatch(texts));
        const r = await runProcess(this.cfg.bin, [...this.dataArgs(), '-f', 'html', mode.name, input], { signal: call.signal });
        const decoded = decodeBatch(r.stdout.toString('utf8'), texts.length);
        if (!decoded) {
          const last = r.stderrTail.trim().split('\n').at(-1) ?? '';
          throw new ProcessError(`apertium ${mode.name}: segment markers did not come back intact${last ? `: ${last}` : ''}`, { exitCode: r.exitCode, stderrTail: r.stderrTail });
        }
        texts = decoded.map(stripUnknownMarks);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    return batch.segments.map((s, i) => ({ id: s.id, text: texts[i]! }));
  }
}

export function createApertiumTranslator(opts: ApertiumOptions = {}): ApertiumTranslator {
  return new ApertiumTranslator(opts);
}
