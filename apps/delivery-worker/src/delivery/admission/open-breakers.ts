import { setBounded } from '@app/runtime';

/** What Redis answered for an endpoint whose breaker is open (the acquire script's `open` verdict). */
export interface OpenBreaker {
  retryAt: Date;
  consecutiveFailures: number;
  lastError: string | null;
}

const MAX_REMEMBERED = 10_000;

/**
 * The endpoints whose breaker Redis said is open, taken as still open without asking for a short while.
 * Every job of an open endpoint is recorded as a failed attempt without a call; asking Redis for each
 * one kept up to ENDPOINT_CONCURRENCY acquire scripts in flight at once, and the jobs arriving meanwhile
 * found the endpoint's asks full and went back through Redis's delayed set instead. The answer is trusted
 * for no longer than `trustMs` and never past the breaker's `retry_at`, so another worker's news (an
 * operator closing it, a forced call that succeeded) reaches this process as soon as a reused lease's
 * would, and the half-open probe is still asked for at its time.
 */
export class OpenBreakers {
  private readonly open = new Map<string, OpenBreaker & { trustUntil: number }>();

  constructor(private readonly trustMs: number) {}

  remember(endpointKey: string, breaker: OpenBreaker, now: number): void {
    const trustUntil = Math.min(breaker.retryAt.getTime(), now + this.trustMs);
    if (trustUntil > now) setBounded(this.open, endpointKey, { ...breaker, trustUntil }, MAX_REMEMBERED);
  }

  /** The breaker as Redis last told it, while that is still trusted; null otherwise (ask Redis). */
  lookup(endpointKey: string, now: number): OpenBreaker | null {
    const known = this.open.get(endpointKey);
    if (!known) return null;
    if (now >= known.trustUntil) {
      this.open.delete(endpointKey);
      return null;
    }
    return { retryAt: known.retryAt, consecutiveFailures: known.consecutiveFailures, lastError: known.lastError };
  }

  /** This process closed the breaker (a call through it succeeded). */
  forget(endpointKey: string): void {
    this.open.delete(endpointKey);
  }
}
