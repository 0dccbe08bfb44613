/**
 * Small real handlers for the worker's tests and the end-to-end checks of a deployment: every
 * stage does real ffmpeg work on the job's media and is resumable through ArtifactCache (a
 * stage whose output exists is skipped and reported as stage_done cached=true).
 *
 * prepare-asset: probe (ffprobe) -> transcode (H.264/AAC at real-time pace with `-re`, the way a
 * live encoder reads, so a stage lasts as long as the clip and a test can interrupt it) ->
 * extract-audio (16 kHz mono WAV) -> asset_prepared.
 * prepare-version: script (a JSON script from the extracted audio's duration) -> version_prepared.
 * generate-version: render (remux the transcoded video, AAC audio track) -> version_generated.
 */
import { spawn } from 'node:child_process';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ArtifactCache, type StageOutput } from '@dub/pipeline';
import { AssetError, ProcessError, blobKeys, type Job, type JobHandlers, type JobRuntime, type PrepareAssetJob, type StageContext } from '@dub/core';

function run(cmd: string, args: string[], ctx: StageContext, onStdoutLine?: (line: string) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let partial = '';
    child.stdout.on('data', (d: Buffer) => {
      const s = d.toString();
      out += s;
      if (!onStdoutLine) return;
      const lines = (partial + s).split('\n');
      partial = lines.pop() ?? '';
      for (const l of lines) onStdoutLine(l);
    });
    child.stderr.on('data', (d: Buffer) => {
      err = (err + d.toString()).slice(-4000);
    });
    const onAbort = () => child.kill('SIGKILL');
    ctx.signal?.addEventListener('abort', onAbort, { once: true });
    child.on('error', (e) => reject(new ProcessError(`${cmd} could not start: ${e.message}`, { exitCode: null, stderrTail: '', cause: e })));
    child.on('close', (code, signal) => {
      ctx.signal?.removeEventListener('abort', onAbort);
      if (code === 0) resolve(out);
      else reject(new ProcessError(`${cmd} exited with ${code ?? signal}: ${err.split('\n').slice(-3).join(' ')}`, { exitCode: code, signal, stderrTail: err, retryable: !!ctx.signal?.aborted }));
    });
  });
}

/** A stage through the artifact cache, reported as a stage_done event. */
async function stage<T>(rt: JobRuntime, cache: ArtifactCache, job: Job, name: string, inputs: unknown, produce: (out: StageOutput) => Promise<T>) {
  const t0 = performance.now();
  const r = await cache.run(name, inputs, rt.ctx, produce);
  await rt.emit({ type: 'stage_done', job_type: job.type, stage: name, cached: r.cached, seconds: (performance.now() - t0) / 1000 });
  return r;
}

async function localCopy(rt: JobRuntime, key: string, dir: string, name: string): Promise<string> {
  const local = rt.store.localPath(key);
  if (local && (await rt.store.has(key))) return local;
  const file = path.join(dir, name);
  await rt.store.getToFile(key, file);
  return file;
}

async function withTmp<T>(rt: JobRuntime, fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await fsp.mkdtemp(path.join(rt.config.tmpDir || os.tmpdir(), 'dub-job-'));
  try {
    return await fn(dir);
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
  }
}

async function prepareAsset(job: PrepareAssetJob, rt: JobRuntime): Promise<void> {
  if (!('blob' in job.media)) throw new AssetError('invalid_input', 'these handlers read media from the blob store only');
  const mediaKey = job.media.blob;
  if (!(await rt.store.has(mediaKey))) throw new AssetError('invalid_input', `media blob ${mediaKey} not found`);
  const cache = new ArtifactCache(rt.store, job.asset_id, { tmpDir: rt.config.tmpDir });
  const { ffmpegPath, ffprobePath } = rt.config;
  await withTmp(rt, async (tmp) => {
    const probe = await stage(rt, cache, job, 'probe', { media: mediaKey }, async () => {
      const src = await localCopy(rt, mediaKey, tmp, 'media');
      const json = JSON.parse(await run(ffprobePath, ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', src], rt.ctx)) as {
        format: { duration?: string };
        streams: { codec_type: string }[];
      };
      const duration = Number(json.format.duration ?? 0);
      if (!(duration > 0)) throw new AssetError('unsupported_media', 'media has no duration');
      return { duration, hasAudio: json.streams.some((s) => s.codec_type === 'audio'), hasVideo: json.streams.some((s) => s.codec_type === 'video') };
    });
    if (!probe.value.hasAudio) throw new AssetError('missing_audio_track', 'media has no audio track');
    const duration = probe.value.duration;
    const transcoded = await stage(rt, cache, job, 'transcode', { media: mediaKey, probe: probe.value }, async (out) => {
      const src = await localCopy(rt, mediaKey, tmp, 'media');
      const dst = path.join(out.dir, 'source.mp4');
      await run(
        ffmpegPath,
        ['-nostdin', '-v', 'error', '-re', '-i', src, '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '64k', '-progress', 'pipe:1', '-y', dst],
        rt.ctx,
        (line) => {
          const m = /^out_time_us=(\d+)/.exec(line);
          if (m) rt.ctx.onProgress?.({ stage: 'transcode', fraction: Math.min(1, Number(m[1]) / 1e6 / duration) });
        },
      );
      out.addFile('source.mp4', dst);
      return { duration };
    });
    const audio = await stage(rt, cache, job, 'extract-audio', { video: transcoded.files['source.mp4'] }, async (out) => {
      const src = await localCopy(rt, transcoded.files['source.mp4'], tmp, 'source.mp4');
      const dst = path.join(out.dir, 'audio.wav');
      await run(ffmpegPath, ['-nostdin', '-v', 'error', '-i', src, '-vn', '-ac', '1', '-ar', '16000', '-c:a', 'pcm_s16le', '-y', dst], rt.ctx);
      out.addFile('audio.wav', dst);
      return { bytes: (await fsp.stat(dst)).size };
    });
    await rt.store.putFile(blobKeys.sourceVideo(job.asset_id), await localCopy(rt, transcoded.files['source.mp4'], tmp, 'final.mp4'));
    await rt.store.put(blobKeys.transcript(job.asset_id), JSON.stringify({ duration, audio_key: audio.files['audio.wav'], segments: [] }));
    await rt.emit({ type: 'asset_prepared', duration, source_video_key: blobKeys.sourceVideo(job.asset_id), transcript_key: blobKeys.transcript(job.asset_id) });
  });
}

export const jobHandlers: JobHandlers = {
  'prepare-asset': prepareAsset,
  'prepare-version': async (job, rt) => {
    const cache = new ArtifactCache(rt.store, job.asset_id, { tmpDir: rt.config.tmpDir });
    const transcript = JSON.parse((await rt.store.getBuffer(blobKeys.transcript(job.asset_id))).toString('utf8')) as { duration: number };
    const script = await stage(rt, cache, job, 'script', { version: job.version, duration: transcript.duration }, async (out) => {
      const file = path.join(out.dir, 'script.json');
      await fsp.writeFile(file, JSON.stringify({ locale: job.version.locale, segments: [{ start: 0, end: transcript.duration, text: '' }] }));
      out.addFile('script.json', file);
      return {};
    });
    await rt.store.put(blobKeys.script(job.version.version_id), await rt.store.getBuffer(script.files['script.json']));
    await rt.emit({ type: 'version_prepared', version_id: job.version.version_id, script_key: blobKeys.script(job.version.version_id) });
  },
  'generate-version': async (job, rt) => {
    const cache = new ArtifactCache(rt.store, job.asset_id, { tmpDir: rt.config.tmpDir });
    await withTmp(rt, async (tmp) => {
      const src = await localCopy(rt, blobKeys.sourceVideo(job.asset_id), tmp, 'source.mp4');
      const rendered = await stage(rt, cache, job, 'render', { version: job.version_id, generation: job.generation, script: job.script_key, options: job.options }, async (out) => {
        const video = path.join(out.dir, 'result.mp4');
        const audio = path.join(out.dir, 'result.m4a');
        await run(rt.config.ffmpegPath, ['-nostdin', '-v', 'error', '-i', src, '-c', 'copy', '-y', video], rt.ctx);
        await run(rt.config.ffmpegPath, ['-nostdin', '-v', 'error', '-i', src, '-vn', '-c:a', 'aac', '-b:a', '64k', '-y', audio], rt.ctx);
        out.addFile('result.mp4', video);
        out.addFile('result.m4a', audio);
        const probe = JSON.parse(await run(rt.config.ffprobePath, ['-v', 'error', '-print_format', 'json', '-show_format', video], rt.ctx)) as { format: { duration?: string } };
        return { duration: Number(probe.format.duration ?? 0) };
      });
      const videoKey = blobKeys.resultVideo(job.version_id, job.generation);
      const audioKey = blobKeys.resultAudio(job.version_id, job.generation);
      await rt.store.put(videoKey, await rt.store.getStream(rendered.files['result.mp4']));
      await rt.store.put(audioKey, await rt.store.getStream(rendered.files['result.m4a']));
      await rt.emit({ type: 'version_generated', version_id: job.version_id, generation: job.generation, result_video_key: videoKey, result_audio_key: audioKey, duration: rendered.value.duration });
    });
  },
};
