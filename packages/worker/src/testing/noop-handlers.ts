/**
 * Handlers that do nothing: the queue benchmark measures what a job pays beyond its stages.
 */
import type { JobHandlers } from '@dub/core';

const noop = async (): Promise<void> => {};

export const jobHandlers: JobHandlers = {
  'prepare-asset': noop,
  'prepare-version': noop,
  'generate-version': noop,
};
