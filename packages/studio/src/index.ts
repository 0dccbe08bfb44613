/**
 * @dub/studio: the web editor of one version. The page itself is dist/index.html (a shell the API
 * fills), dist/studio.css and the ES modules compiled from src/ (entry dist/main.js). This module
 * is what the API imports: where the built files are, how to fill the shell, and the page's pure
 * logic (also usable elsewhere).
 */

/** The folder with the built page (index.html, studio.css, *.js). */
export const STUDIO_DIST_URL: URL = new URL('./', import.meta.url);
/** The shell template inside the dist folder. */
export const STUDIO_SHELL_FILE = 'index.html';
/** The page's entry module inside the dist folder. */
export const STUDIO_ENTRY_FILE = 'main.js';

export { renderStudioShell, bootJson, escapeHtml, type ShellValues } from './shell.js';
export type { StudioAccess, StudioAsset, StudioBoot, StudioContext, TaggedScript } from './types.js';
export { formatTime, parseTime, type ParsedTime } from './time.js';
export { validateSegments, hasErrors, diffSegments, diffScript, diffSpeakers, rebaseEdits, rebaseScript, rebaseSpeakers, speakerStats, type SpeakerLike, type ScriptIssue, type SegmentChange, type EditableField, type RebaseResult, type ScriptDiff, type ScriptRebase } from './script-edit.js';
export { splitSegment, mergeWithNext, splitText, freshId, edgeLimits, placeEdge, MIN_SPLIT_PART, MIN_SEGMENT, type OpResult } from './segment-ops.js';
export { EditHistory } from './history.js';
export { decodeWaveform, findSilences, snapEdge, nextBoundary, columnPeaks, type WaveformBody, type WaveformData, type Span } from './waveform.js';
export { countChars, readingStats, isRtlLocale, dirOf, READING_LIMITS, type ReadingStats, type ReadingLimits } from './reading.js';
export { segmentFigures, summaryText, type QualityReportView, type ReportSegment, type ReportSummary, type QualityFlag } from './report.js';
export { shortcutFor, SHORTCUTS, type ShortcutAction, type FocusKind } from './shortcuts.js';
export { registerSegmentAction, segmentActions, type SegmentAction, type SegmentActionContext } from './hooks.js';
export { studioActions, pollDelayMs, type StudioActions } from './status.js';
export { StudioClient, ApiError, linkCredential, type StudioCredential, type StudioClientOptions, type LineAudio, type LibraryVoiceView } from './api-client.js';
