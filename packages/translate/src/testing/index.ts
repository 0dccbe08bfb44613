export { translatorConformance, type ConformanceOptions, type ConformanceSubject } from './conformance.js';
export { startFakeTranslationServer, fakeTranslate, type FakeTranslationServer, type Fault, type RecordedRequest } from './fake-translation-server.js';
