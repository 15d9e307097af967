import { WorkerStoppingError } from '../worker-stopping-error';

/**
 * WORKER_CONCURRENCY: callbacks in flight in this process at once, across every queue shard. A call
 * covers asking Redis for the endpoint's lease, the call and giving the lease back; loading the event
 * and recording the outcome happen outside it, so jobs waiting for a group commit do not keep others
 * from calling (and the commits' batches grow with the load instead of being capped by the calls). A job
 * waiting for one of this process's leases holds no call: it gets the lease together with the call of
 * the call that hands it over (EndpointAdmission).
 */
export class CallLimit {
  private readonly waiting: (() => void)[] = [];
  private taken = 0;
  private stopping = false;

  constructor(private readonly limit: number) {}

  /** Resolves with a call; throws WorkerStoppingError once the worker is stopping (no call starts then). */
  async take(): Promise<void> {
    if (this.taken < this.limit && this.waiting.length === 0) this.taken += 1;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    if (this.stopping) {
      this.give();
      throw new WorkerStoppingError();
    }
  }

  /** Passes the call straight to the longest-waiting job, if any. */
  give(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.taken -= 1;
  }

  get inUse(): number {
    return this.taken;
  }

  stop(): void {
    this.stopping = true;
  }
}
