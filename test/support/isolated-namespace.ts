import type { Job, JobType } from 'bullmq';
import { Client } from 'pg';
import { DeliveryQueues, loadEnvironment } from '@app/runtime';
import { copyDatabase, dropDatabase, onMaintenance } from './worker-databases';

/**
 * A database and Redis prefix of a suite's own, inside the run's namespace and removed afterwards: for
 * suites that assert on `queued` rows and waiting jobs (which a worker or reconciler started by another
 * suite of the same run would consume) or that take their database offline.
 */
export class IsolatedNamespace {
  readonly databaseName: string;
  readonly databaseUrl: string;
  readonly redisPrefix: string;
  /** Settings for startApp so the app uses this namespace. */
  readonly overrides: { DATABASE_URL: string; REDIS_PREFIX: string } & Record<string, string>;
  db!: Client;
  /** The namespace's delivery queue (every shard), to look at the jobs the apps enqueue. */
  queues!: DeliveryQueues;
  private readonly baseUrl: URL;

  /** `settings`: more for every app of the suite and for `queues` alike (a shard count, say). */
  constructor(name: string, settings: Record<string, string> = {}) {
    this.baseUrl = new URL(process.env.DATABASE_URL ?? '');
    this.databaseName = `${this.baseUrl.pathname.slice(1)}_${name.replace(/-/g, '_')}`;
    this.databaseUrl = Object.assign(new URL(this.baseUrl.toString()), { pathname: `/${this.databaseName}` }).toString();
    this.redisPrefix = `${process.env.REDIS_PREFIX ?? 'cbtest'}:${name}-spec`;
    this.overrides = { ...settings, DATABASE_URL: this.databaseUrl, REDIS_PREFIX: this.redisPrefix };
  }

  /** Runs one statement on the maintenance database (create, drop, allow or refuse connections). */
  async maintenanceQuery(sql: string, parameters: unknown[] = []): Promise<void> {
    await onMaintenance(this.baseUrl.toString(), (client) => client.query(sql, parameters));
  }

  async setUp(): Promise<void> {
    // A copy of the run's migrated database (global-setup.ts), rather than a migration of its own.
    const template = process.env.TEST_RUN_DATABASE_URL;
    if (!template) throw new Error('IsolatedNamespace needs the e2e global setup (test/support/global-setup.ts)');
    await copyDatabase(template, this.databaseUrl);
    this.db = new Client({ connectionString: this.databaseUrl });
    await this.db.connect();
    this.queues = DeliveryQueues.open(loadEnvironment({ ...process.env, ...this.overrides }), 'consumer');
  }

  /** A job of this namespace by id, whatever its shard. */
  async getJob(jobId: string): Promise<Job | undefined> {
    for (const queue of this.queues.all()) {
      const job = await queue.getJob(jobId);
      if (job) return job;
    }
    return undefined;
  }

  /** The jobs in these states across every shard. */
  async getJobs(states: JobType[]): Promise<Job[]> {
    return (await Promise.all(this.queues.all().map((queue) => queue.getJobs(states)))).flat();
  }

  async tearDown(): Promise<void> {
    await Promise.all((this.queues?.all() ?? []).map((queue) => queue.obliterate({ force: true }).catch(() => undefined)));
    await this.queues?.close();
    await this.db?.end();
    await dropDatabase(this.databaseUrl);
  }
}
