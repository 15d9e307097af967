/**
 * Caps the calls in flight to one origin. Bot calls are synchronous, so without a cap a webhook that
 * hangs would collect every waiting call (sockets, memory) until its time-out; with it, the excess is
 * refused at once and other webhooks are unaffected.
 */
export class OriginLimiter {
  private readonly inFlight = new Map<string, number>();

  constructor(readonly maxPerOrigin: number) {}

  tryAcquire(origin: string): boolean {
    const current = this.inFlight.get(origin) ?? 0;
    if (current >= this.maxPerOrigin) return false;
    this.inFlight.set(origin, current + 1);
    return true;
  }

  release(origin: string): void {
    const current = this.inFlight.get(origin) ?? 0;
    if (current <= 1) this.inFlight.delete(origin);
    else this.inFlight.set(origin, current - 1);
  }

  count(origin: string): number {
    return this.inFlight.get(origin) ?? 0;
  }
}
