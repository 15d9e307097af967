import { isDeepStrictEqual } from 'node:util';

/** Polls until `probe` returns a value other than undefined/false, or fails loudly with the last state seen. */
export async function waitFor<T>(
  description: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  { timeoutMs = 15_000, intervalMs = 50 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${description}${lastError instanceof Error ? `: ${lastError.message}` : ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/**
 * Waits until `read` answers `expected` (deep equality), for a value written by a timer or another
 * process; fails with the last value read.
 */
export async function waitForValue<T>(
  description: string,
  read: () => Promise<T> | T,
  expected: T,
  options?: { timeoutMs?: number; intervalMs?: number },
): Promise<void> {
  await waitFor(
    description,
    async () => {
      const value = await read();
      if (isDeepStrictEqual(value, expected)) return true;
      throw new Error(`read ${JSON.stringify(value)}, expected ${JSON.stringify(expected)}`);
    },
    options,
  );
}
