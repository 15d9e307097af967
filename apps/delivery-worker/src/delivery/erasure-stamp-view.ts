import { ERASURE_STAMP_KEEP_MS, ERASURE_TRUST_MS, within } from '@app/runtime';

/** A reading of the erasure stamp longer than this counts as "stamped" (the calls re-read PostgreSQL). */
const READ_LIMIT_MS = 500;

interface Reading {
  /** performance.now() before the reading was sent, and when it was answered. */
  readAt: number;
  answeredAt: number;
  stamped: boolean;
}

/**
 * This process's view of the erasure stamp (libs/runtime erasure-stamp.ts for the rules): one reading
 * serves every call for ERASURE_TRUST_MS, and the next is taken halfway through, in the background, so
 * a busy worker's calls seldom wait for Redis and make no round trip of their own.
 */
export class ErasureStampView {
  private reading: Reading | null = null;
  private pending: Promise<Reading> | null = null;

  /** `stamped`: whether the key exists now; `clock`: a monotonic ms clock. */
  constructor(
    private readonly stamped: () => Promise<boolean>,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /**
   * True when no erasure can have committed between `loadStartedAt` (this clock) and a call starting
   * now; false when the event must be read again (an erasure runs or ran lately, or Redis did not answer).
   */
  async quietSince(loadStartedAt: number): Promise<boolean> {
    let reading = this.reading;
    const now = this.clock();
    if (!reading || now >= reading.readAt + ERASURE_TRUST_MS) reading = await this.read();
    else if (now >= reading.readAt + ERASURE_TRUST_MS / 2) void this.read();
    return !reading.stamped && loadStartedAt >= reading.answeredAt - ERASURE_STAMP_KEEP_MS && this.clock() < reading.readAt + ERASURE_TRUST_MS;
  }

  /** One reading at a time, shared by every caller that needs it. */
  private read(): Promise<Reading> {
    this.pending ??= this.take().finally(() => {
      this.pending = null;
    });
    return this.pending;
  }

  private async take(): Promise<Reading> {
    const readAt = this.clock();
    let stamped = true;
    try {
      stamped = await within(this.stamped(), READ_LIMIT_MS, 'reading the erasure stamp');
    } catch {
      // Redis away or slow: the calls re-read PostgreSQL, as if an erasure ran.
    }
    const reading = { readAt, answeredAt: this.clock(), stamped };
    if (!this.reading || this.reading.readAt < readAt) this.reading = reading;
    return reading;
  }
}
