/**
 * The thread that speaks single lines for the API (line-synth.ts): re-dub of one segment and
 * voice previews, through @dub/pipeline's generation code. It opens the API's filesystem blob
 * store itself and keeps its ONNX sessions (Piper, OpenVoice) between requests; requests come
 * one at a time.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { FsBlobStore, isDubError, loadConfig, silentLogger, type JobRuntime } from '@dub/core';
import { SessionCache } from '@dub/onnx';
import { generateOptionsFromEnv, previewSpeakerVoice, redubSegment } from '@dub/pipeline';
import type { LineSynthReply, LineSynthRequest } from './line-synth.js';

const data = workerData as { storeRoot: string };
const store = new FsBlobStore(data.storeRoot);
const config = loadConfig();
const sessions = new SessionCache();
const opts = generateOptionsFromEnv(process.env);

function runtime(): JobRuntime {
  return { store, config, sessions, ctx: { logger: silentLogger, onProgress: () => undefined }, emit: async () => undefined, enqueue: async () => undefined, attempt: 1 };
}

parentPort!.on('message', (m: LineSynthRequest | { type: 'close' }) => {
  if (m.type === 'close') {
    void sessions.disposeAll().finally(() => parentPort!.postMessage({ type: 'closed' }));
    return;
  }
  void (async () => {
    let reply: LineSynthReply;
    try {
      if (m.type === 'redub') {
        const r = await redubSegment(m.job, runtime(), opts, m.request);
        reply = { type: 'result', id: m.id, result: r };
      } else {
        const r = await previewSpeakerVoice(m.job, runtime(), opts, m.request);
        reply = { type: 'result', id: m.id, result: r };
      }
    } catch (e) {
      const err = e as Error;
      // a source the pipeline cannot read (invalid_input: no video stream, not media) is the version's input, not a fault here
      reply = isDubError(e)
        ? { type: 'error', id: m.id, error: { code: e.code, message: e.code === 'invalid_input' && e.status >= 500 ? `the version's source cannot be dubbed: ${e.message}` : e.message, status: e.code === 'invalid_input' && e.status >= 500 ? 400 : e.status, details: e.details ?? null } }
        : { type: 'error', id: m.id, error: { code: 'internal_error', message: err?.stack ?? String(e), status: 500, details: null } };
    }
    const buf = reply.type === 'result' ? (reply.result as { wav: Buffer }).wav : undefined;
    parentPort!.postMessage(reply, buf ? [buf.buffer as ArrayBuffer] : []);
  })();
});
