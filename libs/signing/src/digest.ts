import { createHash, timingSafeEqual } from 'node:crypto';

export function hexDigest(algorithm: 'sha1' | 'sha256' | 'md5', text: string): string {
  return createHash(algorithm).update(text, 'utf8').digest('hex');
}

/** Constant-time equality for signatures; different lengths are unequal without an early exit on content. */
export function safeEqual(presented: string, expected: string): boolean {
  const a = Buffer.from(presented, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  if (a.length !== b.length) {
    timingSafeEqual(b, b);
    return false;
  }
  return timingSafeEqual(a, b);
}

/** Whether a Unix-seconds timestamp lies within `toleranceSeconds` of `nowSeconds`. */
export function withinTolerance(timestamp: number, nowSeconds: number, toleranceSeconds: number): boolean {
  return Number.isFinite(timestamp) && Math.abs(nowSeconds - timestamp) <= toleranceSeconds;
}

export const unixSeconds = (now: Date = new Date()): number => Math.floor(now.getTime() / 1000);
