/**
 * The embedded queue's journal on disk: a file per job (`<dataDir>/queue/jobs/<job_id>.json`,
 * written whole or not at all) and per event not yet delivered (`<dataDir>/queue/events/<seq>.json`).
 * A restart reloads both; unreadable files are moved aside (`.bad`). Removing a file that fails
 * is tried again with backoff until it succeeds.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { asStorageError, parseJob, type Job, type Logger, type WorkerEvent } from '@dub/core';
import { errInfo, type FaultBackoff } from './embedded-faults.js';

/** What a job's file holds. */
export interface JobFile {
  job: Job;
  attempt: number;
  finished: boolean;
}

/** An event written and not yet delivered. */
export interface PendingEvent {
  seq: number;
  jobId: string;
  event: WorkerEvent;
  file: string;
}

const SEQ_WIDTH = 16;

/** Write `file` whole or not at all; a disk fault rejects with a StorageError saying `what` failed. */
async function writeAtomic(file: string, data: string, what: string): Promise<void> {
  const tmp = `${file}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
  try {
    await fsp.writeFile(tmp, data);
    await fsp.rename(tmp, file);
  } catch (e) {
    await fsp.rm(tmp, { force: true }).catch(() => undefined);
    throw asStorageError(e, `queue: ${what}`);
  }
}

export class QueueJournal {
  private readonly jobsDir: string;
  private readonly eventsDir: string;
  /** Files of finished jobs and delivered events whose removal failed and is tried again. */
  private readonly leftovers = new Set<string>();

  constructor(
    dataDir: string,
    private readonly backoff: FaultBackoff,
    private readonly logger: Logger,
    /** Called when the last leftover file is gone (the queue may be idle now). */
    private readonly onSettled: () => void,
  ) {
    this.jobsDir = path.join(dataDir, 'queue', 'jobs');
    this.eventsDir = path.join(dataDir, 'queue', 'events');
    fs.mkdirSync(this.jobsDir, { recursive: true });
    fs.mkdirSync(this.eventsDir, { recursive: true });
  }

  /** Files whose removal is still being tried. */
  get leftoverCount(): number {
    return this.leftovers.size;
  }

  /** Read the persisted jobs and undelivered events (synchronously, in order). */
  load(): { jobs: JobFile[]; events: PendingEvent[] } {
    const jobs: JobFile[] = [];
    const events: PendingEvent[] = [];
    for (const file of this.files(this.jobsDir)) {
      try {
        const f = JSON.parse(fs.readFileSync(file, 'utf8')) as JobFile;
        jobs.push({ job: parseJob(f.job), attempt: f.attempt, finished: f.finished });
      } catch (e) {
        this.logger.error({ file, err: (e as Error).message }, 'unreadable persisted job; moved aside');
        fs.renameSync(file, `${file}.bad`);
      }
    }
    for (const file of this.files(this.eventsDir)) {
      try {
        const p = JSON.parse(fs.readFileSync(file, 'utf8')) as { seq: number; job_id: string; event: WorkerEvent };
        events.push({ seq: p.seq, jobId: p.job_id, event: p.event, file });
      } catch (e) {
        this.logger.error({ file, err: (e as Error).message }, 'unreadable persisted event; moved aside');
        fs.renameSync(file, `${file}.bad`);
      }
    }
    return { jobs, events };
  }

  private files(dir: string): string[] {
    return fs.readdirSync(dir).sort().filter((name) => name.endsWith('.json')).map((name) => path.join(dir, name));
  }

  private jobFile(jobId: string): string {
    return path.join(this.jobsDir, `${encodeURIComponent(jobId)}.json`);
  }

  writeJob(f: JobFile): Promise<void> {
    return writeAtomic(this.jobFile(f.job.job_id), JSON.stringify(f), `recording job ${f.job.job_id}`);
  }

  /** Remove a job's file (rejects on a disk fault: the caller tries again). */
  removeJob(jobId: string): Promise<void> {
    return fsp.rm(this.jobFile(jobId), { force: true });
  }

  /** Write event `seq`; resolves with its file. */
  async writeEvent(seq: number, event: WorkerEvent): Promise<string> {
    const file = path.join(this.eventsDir, `${String(seq).padStart(SEQ_WIDTH, '0')}.json`);
    await writeAtomic(file, JSON.stringify({ seq, job_id: event.job_id, event }), `writing a ${event.type} event of job ${event.job_id}`);
    return file;
  }

  /** Remove a file of the queue; on a disk fault, try again later (never rejects). */
  async removeFile(file: string): Promise<boolean> {
    try {
      await fsp.rm(file, { force: true });
    } catch (e) {
      this.leftovers.add(file);
      const delay = this.backoff.next(file);
      this.logger.error({ file: path.relative(path.dirname(this.jobsDir), file), ...errInfo(asStorageError(e, 'queue: removing a file')), delay_ms: delay }, 'could not remove a file of the queue; trying again');
      this.backoff.after(delay, () => void this.removeFile(file));
      return false;
    }
    this.backoff.clear(file);
    if (this.leftovers.delete(file)) this.onSettled();
    return true;
  }
}
