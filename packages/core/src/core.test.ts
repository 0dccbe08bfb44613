import { describe, expect, it } from 'vitest';
import {
  AbortedError, AssetError, DubError, LOCALES, SOURCE_LOCALES, TARGET_LOCALES, UpstreamError, ValidationError,
  VERSION_STATUSES, VERSION_TRANSITIONS, deriveAssetStatus, getLocale, isSourceLocale, isTargetLocale, languageOf,
  newId, nowIso, throwIfAborted, toDubError, versionTransition, type VersionTrigger,
} from './index.js';

describe('locales', () => {
  it('has the 39 rows of the contract with the source/target exceptions', () => {
    expect(LOCALES).toHaveLength(39);
    expect(new Set(LOCALES.map((l) => l.code)).size).toBe(39);
    expect(SOURCE_LOCALES).toHaveLength(38);
    expect(TARGET_LOCALES).toHaveLength(37);
    expect(isSourceLocale('he-IL')).toBe(true);
    expect(isTargetLocale('he-IL')).toBe(false);
    expect(isSourceLocale('ur-IN')).toBe(true);
    expect(isTargetLocale('ur-IN')).toBe(false);
    expect(isSourceLocale('th-TH')).toBe(false);
    expect(isTargetLocale('th-TH')).toBe(true);
    expect(isSourceLocale('en-us')).toBe(false);
    expect(isTargetLocale('xx-XX')).toBe(false);
  });
  it('carries the language data engines need', () => {
    expect(getLocale('zh-CN')).toMatchObject({ spaceSeparated: false, script: 'Hans', iso639_3: 'cmn' });
    expect(getLocale('ja-JP')?.spaceSeparated).toBe(false);
    expect(getLocale('th-TH')?.spaceSeparated).toBe(false);
    expect(getLocale('ar-AE')?.rtl).toBe(true);
    expect(getLocale('de-DE')?.spaceSeparated).toBe(true);
    expect(languageOf('yue-CN')).toBe('yue');
    expect(languageOf('pt-BR')).toBe('pt');
    for (const l of LOCALES) {
      expect(l.iso639_3).toMatch(/^[a-z]{3}$/);
      if (l.iso639_1) expect(l.iso639_1).toMatch(/^[a-z]{2}$/);
      expect(l.code).toMatch(/^[a-z]{2,3}-[A-Z]{2}$/);
    }
  });
});

describe('version state machine', () => {
  it('allows exactly the transitions of the table', () => {
    const triggers: VersionTrigger[] = ['prepared', 'prepare_failed', 'generate', 'generated', 'generate_failed', 'revise', 'revise_unprepared', 'edit'];
    for (const from of VERSION_STATUSES) {
      for (const t of triggers) {
        const row = VERSION_TRANSITIONS.find((x) => x.from === from && x.trigger === t);
        const a = versionTransition(from, t);
        expect(a.allowed).toBe(!!row);
        if (a.allowed) expect(a.to).toBe(row!.to);
      }
    }
  });
  it('follows the contract', () => {
    expect(versionTransition('NotReady', 'prepared')).toEqual({ allowed: true, to: 'ReadyToEdit', event: 'version_ready' });
    expect(versionTransition('ReadyToEdit', 'generate')).toEqual({ allowed: true, to: 'Generating', event: 'version_generating' });
    expect(versionTransition('Generating', 'generated')).toEqual({ allowed: true, to: 'Completed', event: 'version_generated' });
    expect(versionTransition('Completed', 'revise')).toEqual({ allowed: true, to: 'ReadyToEdit' });
    expect(versionTransition('Failed', 'revise')).toEqual({ allowed: true, to: 'ReadyToEdit' });
    expect(versionTransition('ReadyToEdit', 'revise')).toEqual({ allowed: true, to: 'ReadyToEdit' });
    const refused = versionTransition('Generating', 'generate');
    expect(refused.allowed).toBe(false);
    if (!refused.allowed) expect(refused.allowedFrom).toEqual(['ReadyToEdit']);
    expect(versionTransition('NotReady', 'revise').allowed).toBe(false);
    expect(versionTransition('Generating', 'revise').allowed).toBe(false);
    expect(versionTransition('Completed', 'edit').allowed).toBe(false);
  });
  it('derives the asset status from its versions', () => {
    expect(deriveAssetStatus(false, [])).toBe('Dubbing');
    expect(deriveAssetStatus(false, ['NotReady', 'ReadyToEdit'])).toBe('Dubbing');
    expect(deriveAssetStatus(false, ['ReadyToEdit', 'Completed', 'Generating'])).toBe('Ready');
    expect(deriveAssetStatus(false, ['ReadyToEdit', 'Failed'])).toBe('PendingReview');
    expect(deriveAssetStatus(true, ['ReadyToEdit'])).toBe('Failed');
  });
});

describe('errors', () => {
  it('carry code, retryable and status', () => {
    const v = new ValidationError('name must not be empty', { field: 'name' });
    expect(v).toBeInstanceOf(DubError);
    expect([v.code, v.status, v.retryable, v.field]).toEqual(['validation_error', 400, false, 'name']);
    const a = new AssetError('missing_audio_track', 'no audio');
    expect([a.code, a.retryable]).toEqual(['missing_audio_track', false]);
    expect(new UpstreamError('x', { upstreamStatus: 429 }).retryable).toBe(true);
    expect(new UpstreamError('x', { upstreamStatus: 503 }).retryable).toBe(true);
    expect(new UpstreamError('x', { upstreamStatus: 400 }).retryable).toBe(false);
    expect(new UpstreamError('x').retryable).toBe(true);
  });
  it('wraps unknown errors keeping the cause', () => {
    const cause = new Error('boom');
    const e = toDubError(cause);
    expect(e.code).toBe('internal_error');
    expect(e.cause).toBe(cause);
    expect(toDubError(v())).toBeInstanceOf(ValidationError);
    function v() {
      return new ValidationError('x');
    }
  });
  it('throwIfAborted', () => {
    const c = new AbortController();
    expect(() => throwIfAborted(c.signal)).not.toThrow();
    c.abort();
    expect(() => throwIfAborted(c.signal)).toThrow(AbortedError);
  });
});

describe('ids and timestamps', () => {
  it('makes prefixed unique ids', () => {
    const ids = new Set(Array.from({ length: 1000 }, () => newId('ast')));
    expect(ids.size).toBe(1000);
    for (const id of ids) expect(id).toMatch(/^ast_[a-z2-7]{24}$/);
  });
  it('formats ISO 8601 UTC', () => {
    expect(nowIso(new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 6)))).toBe('2026-01-02T03:04:05.006Z');
  });
});
