import { join } from 'node:path';
import { freePort } from '../support/bench-environment';
import { FigureMemo } from '../support/figure-memo';
import type { BenchEnvironment } from '../support/bench-environment';
import { waitReady } from '../support/ipc';
import type { ProcessSupervisor, SupervisedProcess } from '../support/process-supervisor';
import { createBaselineTables } from './baseline-schema';

/**
 * Starts and stops the framework-free pipeline's processes (each an ingest and a worker on one
 * queue), so a measurement runs with exactly one or exactly two of them; remembers each figure, so
 * scenarios that compare against the same baseline measure it once per run.
 */
export class BaselineRunner {
  private readonly running: Array<{ process: SupervisedProcess; url: string }> = [];
  private readonly figures = new FigureMemo();
  private tablesReady: Promise<void> | null = null;
  /** Ingest URLs of processes started since the last `takeUnwarmed`: they are warmed before anything is measured. */
  private unwarmed: string[] = [];

  constructor(
    private readonly supervisor: ProcessSupervisor,
    private readonly environment: BenchEnvironment,
    /** Callback URL of baseline account 1, 2, … (the same receiver origins as the service's accounts). */
    private readonly endpointUrls: readonly string[],
  ) {}

  /** What a client sends: the baseline checks a bearer token as the service does. */
  get headers(): Record<string, string> {
    return { authorization: `Bearer ${this.token}` };
  }

  private get token(): string {
    return `bench-baseline-${this.environment.runId}-0123456789`;
  }

  /** Baseline account ids, matching `endpointUrls`. */
  get accounts(): number[] {
    return this.endpointUrls.map((_, index) => index + 1);
  }

  /** Exactly `count` baseline processes running; answers their ingest URLs. */
  async use(count: number): Promise<string[]> {
    while (this.running.length > count) await this.running.pop()?.process.stop();
    while (this.running.length < count) {
      const started = await this.startProcess(`baseline#${this.running.length + 1}`, true);
      this.running.push(started);
      this.unwarmed.push(started.url);
    }
    return this.running.map((entry) => entry.url);
  }

  /** A baseline process that stores and enqueues but does not deliver (a backlog builds up); stop it when done. */
  async ingestOnly(): Promise<{ process: SupervisedProcess; url: string }> {
    await this.use(0);
    return this.startProcess('baseline-ingest', false);
  }

  private async startProcess(name: string, worker: boolean): Promise<{ process: SupervisedProcess; url: string }> {
    this.tablesReady ??= createBaselineTables(this.environment.databaseUrl);
    await this.tablesReady;
    const port = await freePort();
    const child = this.supervisor.start(name, join(__dirname, 'baseline.process.js'), {
      DATABASE_URL: this.environment.databaseUrl,
      REDIS_URL: this.environment.redisUrl,
      BASELINE_QUEUE_PREFIX: `${this.environment.redisPrefix}:baseline`,
      BASELINE_PORT: String(port),
      BASELINE_WORKER: String(worker),
      BASELINE_TOKEN: this.token,
      BASELINE_ENDPOINTS: JSON.stringify(Object.fromEntries(this.endpointUrls.map((url, index) => [index + 1, url]))),
    });
    await waitReady(child.child, child.name, 30_000);
    return { process: child, url: `http://127.0.0.1:${port}` };
  }

  /** The ingest URLs of processes not warmed yet; each is answered once. */
  takeUnwarmed(): string[] {
    const urls = this.unwarmed.filter((url) => this.running.some((entry) => entry.url === url));
    this.unwarmed = [];
    return urls;
  }

  processes(): SupervisedProcess[] {
    return this.running.map((entry) => entry.process);
  }

  async stopAll(): Promise<void> {
    await this.use(0);
  }

  /** The figure named `key`, measured by `measure` the first time it is asked for. */
  once<T>(key: string, measure: () => Promise<T>): Promise<T> {
    return this.figures.once(key, measure);
  }
}
