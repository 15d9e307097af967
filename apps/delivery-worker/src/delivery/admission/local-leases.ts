/** A Redis concurrency lease this process holds for one endpoint, as this process sees it. */
export interface HeldLease {
  id: string;
  /** Local epoch ms the lease expires in Redis (measured from before the acquire was sent: never late). */
  expiresAt: number;
  /**
   * Until when (local epoch ms) the lease may serve another call without asking Redis: set only when the
   * breaker was closed with no failures counted at acquire time, and dropped at this process's first
   * failure on the endpoint; 0 means it goes back to Redis after its call.
   */
  reusableUntil: number;
  /** Local epoch ms the call it serves now began (meaningful while in use). */
  busySince: number;
}

/** What a job waiting for one of this process's leases gets: a lease handed over, or the word to ask Redis. */
export type WaitOutcome = { kind: 'lease'; lease: HeldLease } | { kind: 'ask' } | { kind: 'timeout' } | { kind: 'stopping' };

interface WaitingJob {
  resolve: (outcome: WaitOutcome) => void;
  timer: NodeJS.Timeout;
}

/**
 * One endpoint's leases in this process: the ones in use by calls, the idle ones kept for a moment for
 * the next call (so a busy endpoint costs no Redis script per call), and the jobs waiting here for one
 * of them instead of bouncing through Redis. Pure bookkeeping: EndpointAdmission talks to Redis.
 */
export class LocalLeases {
  private readonly active = new Set<HeldLease>();
  private idle: { lease: HeldLease; since: number }[] = [];
  private readonly waitingJobs: WaitingJob[] = [];

  /** Leases serving calls now. */
  get inUse(): number {
    return this.active.size;
  }

  get idleCount(): number {
    return this.idle.length;
  }

  get waiting(): number {
    return this.waitingJobs.length;
  }

  /**
   * Jobs of this process asking Redis for a lease of this endpoint right now: with the leases in use they
   * are what may come back, so a burst's jobs do not all ask at once (all but the endpoint's share would
   * be refused and sent back through Redis's delayed set) but wait here for one of them.
   */
  asking = 0;
  /** When a job here that could not poll last passed the polling to a waiting one (at most once per poll interval). */
  pollPassedAt = 0;

  /**
   * A job of this process that found the endpoint's leases all held by other workers is polling Redis for
   * one (it counts in `asking` meanwhile): the endpoint's other jobs here wait for what it gets.
   */
  polling = false;

  /**
   * While other workers want this endpoint too (Redis said so at the last acquire), this process's share
   * of its leases, until `shareUntil` (local epoch ms); past it, the whole ENDPOINT_CONCURRENCY.
   */
  private share = 0;
  private shareUntil = 0;

  /** Redis's word on the share at an acquire: a share while other workers want the endpoint, null when none does. */
  learnShare(share: number | null, now: number, keepMs: number): void {
    this.share = share ?? 0;
    this.shareUntil = share === null ? 0 : now + keepMs;
  }

  /** The leases this process may hold now: its share while other workers want the endpoint, else `limit`. */
  allowed(limit: number, now: number): number {
    return this.shareUntil > now ? Math.min(limit, this.share) : limit;
  }

  /** Nothing held, nothing waiting: the entry can go. */
  get empty(): boolean {
    return this.active.size === 0 && this.idle.length === 0 && this.waitingJobs.length === 0 && this.asking === 0;
  }

  /** A lease just acquired in Redis, now serving a call. */
  add(lease: HeldLease, now: number): void {
    lease.busySince = now;
    this.active.add(lease);
  }

  /** When the longest-running call here began (Infinity when none runs). */
  oldestCallSince(): number {
    let oldest = Infinity;
    for (const lease of this.active) oldest = Math.min(oldest, lease.busySince);
    return oldest;
  }

  /** An idle lease still good for a call ending by `mustOutlive`, marked in use; leases past use are returned for release. */
  takeIdle(now: number, mustOutlive: number): { lease: HeldLease | null; retired: HeldLease[] } {
    const retired: HeldLease[] = [];
    while (this.idle.length > 0) {
      const { lease } = this.idle.pop() as { lease: HeldLease };
      if (usable(lease, now, mustOutlive)) {
        lease.busySince = now;
        this.active.add(lease);
        return { lease, retired };
      }
      retired.push(lease);
    }
    return { lease: null, retired };
  }

  /**
   * A call ended with this reusable lease: hands it to the longest-waiting job (`handed`: it stays in
   * use), or keeps it idle (`idle`). Null when the lease cannot serve again (the caller releases it in Redis).
   */
  reuse(lease: HeldLease, now: number, mustOutlive: number): 'handed' | 'idle' | null {
    if (!usable(lease, now, mustOutlive)) return null;
    const waitingJob = this.waitingJobs.shift();
    if (waitingJob) {
      clearTimeout(waitingJob.timer);
      lease.busySince = now;
      waitingJob.resolve({ kind: 'lease', lease });
      return 'handed';
    }
    this.active.delete(lease);
    this.idle.push({ lease, since: now });
    return 'idle';
  }

  /** A lease went back to Redis: the longest-waiting job may now ask Redis for a lease itself. */
  freed(lease: HeldLease): void {
    this.active.delete(lease);
    askRedis(this.waitingJobs.shift());
  }

  /**
   * The process may hold more of the endpoint's leases than it does: the job with the most wait left
   * (the newest) asks Redis for one itself, and polls for it when refused.
   */
  askNewest(): void {
    askRedis(this.waitingJobs.pop());
  }

  /** Every waiting job looks again now (the breaker opened: no lease is coming). */
  askAll(): void {
    for (const waitingJob of this.waitingJobs.splice(0)) askRedis(waitingJob);
  }

  /** Waits for a lease of this process (at most `timeoutMs`). */
  wait(timeoutMs: number): Promise<WaitOutcome> {
    return new Promise((resolve) => {
      const waitingJob: WaitingJob = {
        resolve,
        timer: setTimeout(() => {
          const index = this.waitingJobs.indexOf(waitingJob);
          if (index >= 0) this.waitingJobs.splice(index, 1);
          resolve({ kind: 'timeout' });
        }, timeoutMs),
      };
      this.waitingJobs.push(waitingJob);
    });
  }

  /** Every waiting job gives up now (sent back through Redis): the endpoint's calls have started to hang. */
  sendBackWaitingJobs(): void {
    for (const waitingJob of this.waitingJobs.splice(0)) {
      clearTimeout(waitingJob.timer);
      waitingJob.resolve({ kind: 'timeout' });
    }
  }

  /** This process failed a call here: no lease serves another call without asking Redis (the breaker counts). */
  stopReuse(): HeldLease[] {
    for (const lease of this.active) lease.reusableUntil = 0;
    const idle = this.idle.map(({ lease }) => lease);
    this.idle = [];
    return idle;
  }

  /** Idle leases unused since before `idleBefore`, or no longer usable, leave the local (for release). */
  sweep(now: number, idleBefore: number, mustOutlive: number): HeldLease[] {
    const kept: { lease: HeldLease; since: number }[] = [];
    const retired: HeldLease[] = [];
    for (const entry of this.idle) {
      if (entry.since >= idleBefore && usable(entry.lease, now, mustOutlive)) kept.push(entry);
      else retired.push(entry.lease);
    }
    this.idle = kept;
    return retired;
  }

  /** Shutdown: waiting jobs start no call; idle leases are returned for release. */
  stop(): HeldLease[] {
    for (const waitingJob of this.waitingJobs.splice(0)) {
      clearTimeout(waitingJob.timer);
      waitingJob.resolve({ kind: 'stopping' });
    }
    return this.stopReuse();
  }
}

function usable(lease: HeldLease, now: number, mustOutlive: number): boolean {
  return lease.reusableUntil > now && lease.expiresAt > mustOutlive;
}

function askRedis(waitingJob: WaitingJob | undefined): void {
  if (!waitingJob) return;
  clearTimeout(waitingJob.timer);
  waitingJob.resolve({ kind: 'ask' });
}
