import { BaselineRunner } from '../baseline/baseline-runner';
import { LoadControl } from '../load/load-control';
import { ReceiverControl } from '../receiver/receiver-control';
import { BenchAccounts } from './bench-accounts';
import { FigureMemo } from './figure-memo';
import { type BenchEnvironment, prepareEnvironment } from './bench-environment';
import type { ProcessSupervisor, SupervisedProcess } from './process-supervisor';
import { type RunningApp, ServiceStack, type StackOptions } from './service-stack';

/**
 * Receiver addresses: 20 for the many-endpoint scenarios, then one each for the one-endpoint and
 * isolation scenarios, then the destinations scenario's own.
 */
const MAIN_ENDPOINTS = 20;
const DESTINATION_HOSTS = 6;
const RECEIVER_HOSTS = MAIN_ENDPOINTS + 3 + DESTINATION_HOSTS;

export interface ServiceTarget {
  label: string;
  urls: string[];
  eventPath: string;
  batchPath: string;
  headers: Record<string, string>;
  accounts: number[];
  /** The processes doing the work (ingest and worker, or the baseline's), for CPU per event. */
  processes: SupervisedProcess[];
}

/**
 * Everything a scenario needs: the running service (config-api, ingest, worker), the receiver, the
 * load generator, the baseline pipeline and the accounts, each on its own loopback origin.
 */
export class BenchContext {
  private warmUps = 0;
  /** The service's own figures that later scenarios compare against (e.g. the steady end-to-end rate for the drain). */
  readonly serviceFigures = new FigureMemo();

  private constructor(
    readonly quick: boolean,
    readonly supervisor: ProcessSupervisor,
    readonly environment: BenchEnvironment,
    readonly receiver: ReceiverControl,
    readonly load: LoadControl,
    readonly stack: ServiceStack,
    readonly configApi: RunningApp,
    readonly ingest: RunningApp,
    public worker: RunningApp,
    readonly accounts: BenchAccounts,
    readonly mainAccounts: number[],
    readonly mainHosts: string[],
    readonly singleEndpoint: { account: number; host: string },
    readonly isolation: { healthy: number; healthyHost: string; hanging: number; hangingHost: string },
    readonly baseline: BaselineRunner,
  ) {}

  static async start(supervisor: ProcessSupervisor, quick: boolean, options: StackOptions, log: (line: string) => void): Promise<BenchContext> {
    const environment = await prepareEnvironment(supervisor);
    log(`database ${new URL(environment.databaseUrl).pathname.slice(1)}, Redis prefix ${environment.redisPrefix}`);
    const [receiver, load] = await Promise.all([ReceiverControl.start(supervisor, RECEIVER_HOSTS), LoadControl.start(supervisor)]);
    const stack = new ServiceStack(supervisor, environment, options);
    const [configApi, ingest, worker] = await Promise.all([stack.start('config-api'), stack.start('ingest'), stack.start('delivery-worker')]);
    log(`receiver on ${receiver.hosts[0]}…${receiver.hosts.at(-1)} port ${receiver.port}; config-api, ingest and worker ready`);
    const accounts = new BenchAccounts(configApi.url, environment.adminToken, environment.runId);
    const mainHosts = receiver.hosts.slice(0, MAIN_ENDPOINTS);
    const mainAccounts = await Promise.all(mainHosts.map((host, index) => accounts.create(`main${index}`, receiver.url(host))));
    const [singleHost, healthyHost, hangingHost] = receiver.hosts.slice(MAIN_ENDPOINTS) as [string, string, string];
    const [single, healthy, hanging] = await Promise.all([
      accounts.create('single', receiver.url(singleHost)),
      accounts.create('healthy', receiver.url(healthyHost)),
      accounts.create('hanging', receiver.url(hangingHost)),
    ]);
    const baseline = new BaselineRunner(supervisor, environment, mainHosts.map((host) => receiver.url(host)), process.env.BENCH_BASELINE_SPLIT === '1');
    const bench = new BenchContext(
      quick,
      supervisor,
      environment,
      receiver,
      load,
      stack,
      configApi,
      ingest,
      worker,
      accounts,
      mainAccounts,
      mainHosts,
      { account: single, host: singleHost },
      { healthy, healthyHost, hanging, hangingHost },
      baseline,
    );
    await bench.warmUp();
    log('warmed up (single events and batches through ingest and the worker, not measured)');
    return bench;
  }

  /**
   * Compiles the hot paths of ingest and worker before anything is measured, as in a process that has
   * run for a while (through every ingest in `ingestUrls`; the workers share the queue).
   */
  async warmUp(ingestUrls: string[] = [this.ingest.url]): Promise<void> {
    await this.warm(this.service(ingestUrls));
  }

  /** The warm-up itself, for the service's processes and the baseline's alike: the same requests, the same sizes. */
  private async warm(target: ServiceTarget): Promise<void> {
    // Event ids must be new each time: a repeated id is a duplicate, never delivered again.
    const tag = `warm${++this.warmUps}`;
    const single = await this.load.run({
      targets: target.urls,
      path: target.eventPath,
      headers: target.headers,
      body: { kind: 'event', tag, accounts: target.accounts },
      mode: { kind: 'concurrency', inFlight: 8, durationMs: this.quick ? 1_500 : 5_000 },
      connections: 8,
      deadlineMs: 60_000,
    });
    const batch = await this.load.run({
      targets: target.urls,
      path: target.batchPath,
      headers: target.headers,
      body: { kind: 'batch', tag: `${tag}b`, accounts: target.accounts, size: 500 },
      mode: { kind: 'concurrency', inFlight: 2, total: this.quick ? 4 : 10 },
      connections: 2,
      deadlineMs: 60_000,
    });
    await this.receiver.waitFor(tag, single.accepted, 120_000);
    await this.receiver.waitFor(`${tag}b`, batch.accepted, 120_000);
    await Promise.all([this.receiver.forget(tag), this.receiver.forget(`${tag}b`)]);
  }

  /** Receiver addresses no account uses, for the destinations scenario to point its accounts and destinations at. */
  get destinationHosts(): readonly string[] {
    return this.receiver.hosts.slice(RECEIVER_HOSTS - DESTINATION_HOSTS);
  }

  /** `quick` in --quick runs, `full` otherwise. */
  size(quick: number, full: number): number {
    return this.quick ? quick : full;
  }

  service(ingestUrls: string[] = [this.ingest.url], accounts: number[] = this.mainAccounts, extra: RunningApp[] = []): ServiceTarget {
    return {
      processes: [this.ingest.process, this.worker.process, ...extra.map((app) => app.process)],
      label: 'service',
      urls: ingestUrls,
      eventPath: '/v1/events',
      batchPath: '/v1/events/batch',
      headers: { authorization: `Bearer ${this.environment.ingestToken}` },
      accounts,
    };
  }

  async baselineTarget(processes: number): Promise<ServiceTarget> {
    const urls = await this.baseline.use(processes);
    const target = { label: this.baseline.label(processes), urls, processes: this.baseline.processes(), eventPath: '/events', batchPath: '/events/batch', headers: this.baseline.headers, accounts: this.baseline.accounts };
    // Measured warm, as the service is: each process it has not warmed yet gets the service's warm-up first.
    const fresh = this.baseline.takeUnwarmed();
    if (fresh.length) await this.warm({ ...target, urls: fresh });
    return target;
  }

  /** Replaces the worker, e.g. with other settings; the old one is stopped first. */
  async restartWorker(extraEnv: Record<string, string> = {}): Promise<void> {
    await this.worker.process.stop(30_000);
    this.worker = await this.stack.start('delivery-worker', extraEnv);
  }
}
