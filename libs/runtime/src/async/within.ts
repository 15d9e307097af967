/** What `within` rejects with when time runs out (an Error, with the same message as before). */
export class DidNotAnswerInTime extends Error {}

/** Rejects when `promise` has not settled within `timeoutMs`; for dependencies that may hang instead of failing. */
export async function within<T>(promise: Promise<T>, timeoutMs: number, what = 'the call'): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DidNotAnswerInTime(`${what} did not answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
