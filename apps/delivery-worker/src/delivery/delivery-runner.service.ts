import { type BeforeApplicationShutdown, Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { type OutboundHttpClient, ReadinessService } from '@app/runtime';
import { AccountSettingsCache } from './account-settings.cache';
import { DeliveryProcessor } from './delivery.processor';
import { DELIVERY_HTTP_CLIENT } from './delivery.service';
import { DeliveryStore } from './delivery-store';
import { Reconciler } from './reconciler.service';

const READY_POLL_MS = 500;

/**
 * Owns the worker's start and stop order. Start: consume only once PostgreSQL and Redis both answer
 * (a job taken earlier could not be recorded). Stop (SIGTERM, app.close): stop reconciling, let the
 * BullMQ worker finish its active jobs (each of which awaits its own write), flush anything still
 * buffered, then let go of the settings channel and the HTTP pool, all before Nest closes the
 * database and Redis connections in the shutdown hooks that follow.
 */
@Injectable()
export class DeliveryRunner implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(DeliveryRunner.name);
  private stopping = false;
  private starting: Promise<void> | null = null;
  private consuming: Promise<void> | null = null;

  constructor(
    private readonly processor: DeliveryProcessor,
    private readonly reconciler: Reconciler,
    private readonly store: DeliveryStore,
    private readonly settings: AccountSettingsCache,
    @Inject(DELIVERY_HTTP_CLIENT) private readonly http: OutboundHttpClient,
    private readonly readiness: ReadinessService,
  ) {}

  onApplicationBootstrap(): void {
    this.starting = this.startWhenReady();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    await this.starting;
    await this.reconciler.stop();
    await this.processor.worker.close();
    await this.consuming;
    await this.store.drain();
    await this.settings.close();
    await this.http.close();
  }

  private async startWhenReady(): Promise<void> {
    let waitingSince: number | null = null;
    while (!this.stopping) {
      const problem = await this.readinessProblem();
      if (problem === null) {
        const worker = this.processor.worker;
        this.consuming = worker.run().catch((error: Error) => this.logger.error(`delivery worker stopped: ${error.message}`));
        this.reconciler.start();
        this.logger.log(`consuming deliveries (concurrency ${worker.concurrency})`);
        return;
      }
      if (waitingSince === null) {
        waitingSince = Date.now();
        this.logger.warn(`waiting for dependencies before consuming: ${problem}`);
      }
      await new Promise((resolve) => setTimeout(resolve, READY_POLL_MS));
    }
  }

  private async readinessProblem(): Promise<string | null> {
    const report = await this.readiness.check();
    if (report.status === 'ok') return null;
    return Object.entries(report.checks)
      .filter(([, state]) => state !== 'ok')
      .map(([dependency, state]) => `${dependency} ${state}`)
      .join('; ');
  }

}
