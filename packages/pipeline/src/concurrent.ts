/**
 * Running independent pieces of work a few at a time (lines synthesized by a process-based TTS
 * engine, say), with the results in the items' order.
 */

/**
 * `fn` on every item, at most `limit` at once, results in the items' order. After a failure no
 * further item starts; the call rejects with the first error once the started ones are settled,
 * so nothing of it is still running when it returns.
 */
export async function mapConcurrent<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failed: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (!failed && next < items.length) {
      const i = next++;
      try {
        results[i] = await fn(items[i]!, i);
      } catch (e) {
        failed ??= { error: e };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(Math.floor(limit) || 1, items.length)) }, worker));
  if (failed) throw failed.error;
  return results;
}
