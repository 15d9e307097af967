import { join } from 'node:path';
import { freePort } from '../support/bench-environment';
import { FigureMemo } from '../support/figure-memo';
import type { BenchEnvironment } from '../support/bench-environment';
import { waitReady } from '../support/ipc';
import type { ProcessSupervisor, SupervisedProcess } from '../support/process-supervisor';
import { createBaselineTables } from './baseline-schema';

type Role = 'both' | 'ingest' | 'worker';

/** One baseline pipeline: one process, or (split) an ingest process and a worker process on its queue. */
interface Pipeline {
  processes: SupervisedProcess[];
  url: string;
}

/**
 * Starts and stops the framework-free pipelines (each an ingest and a worker on one queue, in one
 * process, or in two when `split`: BENCH_BASELINE_SPLIT=1, the service's own shape), so a measurement
 * runs with exactly one or exactly two of them; remembers each figure, so scenarios that compare
 * against the same baseline measure it once per run.
 */
export class BaselineRunner {
  private readonly running: Pipeline[] = [];
  private readonly figures = new FigureMemo();
  private tablesReady: Promise<void> | null = null;
  /** Ingest URLs of processes started since the last `takeUnwarmed`: they are warmed before anything is measured. */
  private unwarmed: string[] = [];

  constructor(
    private readonly supervisor: ProcessSupervisor,
    private readonly environment: BenchEnvironment,
    /** Callback URL of baseline account 1, 2, … (the same receiver origins as the service's accounts). */
    private readonly endpointUrls: readonly string[],
    private readonly split = false,
  ) {}

  /** How a report names `count` pipelines. */
  label(count: number): string {
    return `baseline ×${count}${this.split ? ' (ingest and worker apart)' : ''}`;
  }

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

  /** Exactly `count` baseline pipelines running; answers their ingest URLs. */
  async use(count: number): Promise<string[]> {
    while (this.running.length > count) for (const child of this.running.pop()?.processes ?? []) await child.stop();
    while (this.running.length < count) {
      const number = this.running.length + 1;
      const started = this.split ? await this.startSplit(number) : await this.startWhole(number);
      this.running.push(started);
      this.unwarmed.push(started.url);
    }
    return this.running.map((entry) => entry.url);
  }

  /** A baseline process that stores and enqueues but does not deliver (a backlog builds up); stop it when done. */
  async ingestOnly(): Promise<{ process: SupervisedProcess; url: string }> {
    await this.use(0);
    return this.startProcess('baseline-ingest', 'ingest');
  }

  private async startWhole(number: number): Promise<Pipeline> {
    const whole = await this.startProcess(`baseline#${number}`, 'both');
    return { processes: [whole.process], url: whole.url };
  }

  /** Named `baseline-ingest#n` and `baseline-worker#n`, so the cost table shows each role's CPU. */
  private async startSplit(number: number): Promise<Pipeline> {
    const ingest = await this.startProcess(`baseline-ingest#${number}`, 'ingest');
    const worker = await this.startProcess(`baseline-worker#${number}`, 'worker');
    return { processes: [ingest.process, worker.process], url: ingest.url };
  }

  private async startProcess(name: string, role: Role): Promise<{ process: SupervisedProcess; url: string }> {
    this.tablesReady ??= createBaselineTables(this.environment.databaseUrl);
    await this.tablesReady;
    const port = await freePort();
    const child = this.supervisor.start(name, join(__dirname, 'baseline.process.js'), {
      DATABASE_URL: this.environment.databaseUrl,
      REDIS_URL: this.environment.redisUrl,
      BASELINE_QUEUE_PREFIX: `${this.environment.redisPrefix}:baseline`,
      BASELINE_PORT: String(port),
      BASELINE_ROLE: role,
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
    return this.running.flatMap((entry) => entry.processes);
  }

  async stopAll(): Promise<void> {
    await this.use(0);
  }

  /** The figure named `key`, measured by `measure` the first time it is asked for. */
  once<T>(key: string, measure: () => Promise<T>): Promise<T> {
    return this.figures.once(key, measure);
  }
}
