import type { Logger } from '@nestjs/common';
import { loggableErrorText } from '../http/database-errors';

export interface RepeatingRunOptions {
  /** Between the end of one run and the start of the next: a slow run is never overlapped by another. */
  intervalMs: number;
  /** What a failed run was doing, for its warning (`<what> failed: …`). */
  what: string;
  logger: Logger;
}

/**
 * A process's own background loop (the feeder, the reconciler, the retention jobs): one run at a time, a
 * failed run only logged so the loop goes on. Stopping waits for the run in progress, so a service stops
 * its loop before Nest closes the connections the run uses; a long run reads `isStopped` between its
 * steps to end early.
 */
export class RepeatingRun {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly work: () => Promise<unknown>,
    private readonly options: RepeatingRunOptions,
  ) {}

  get isStopped(): boolean {
    return this.stopped;
  }

  /** Runs now, or once `delayMs` has passed; a loop already going (or stopped) is left as it is. */
  start(delayMs?: number): void {
    if (this.stopped || this.timer || this.running) return;
    if (delayMs === undefined) this.run();
    else this.schedule(delayMs);
  }

  /** No further run starts from the moment this is called; resolves once the run in progress has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => {
      this.timer = null;
      this.run();
    }, delayMs);
  }

  private run(): void {
    this.running = this.work()
      .then(
        () => undefined,
        (error: unknown) => this.options.logger.warn(`${this.options.what} failed: ${loggableErrorText(error)}`),
      )
      .finally(() => {
        this.running = null;
        if (!this.stopped) this.schedule(this.options.intervalMs);
      });
  }
}
