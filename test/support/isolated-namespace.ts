import { Queue } from 'bullmq';
import { Client } from 'pg';
import { runMigrations } from '@app/persistence';
import { DELIVERY_QUEUE } from '@app/runtime';

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
  readonly overrides: { DATABASE_URL: string; REDIS_PREFIX: string };
  db!: Client;
  /** The namespace's delivery queue, to look at the jobs the apps enqueue. */
  queue!: Queue;
  private readonly baseUrl: URL;

  constructor(name: string) {
    this.baseUrl = new URL(process.env.DATABASE_URL ?? '');
    this.databaseName = `${this.baseUrl.pathname.slice(1)}_${name.replace(/-/g, '_')}`;
    this.databaseUrl = Object.assign(new URL(this.baseUrl.toString()), { pathname: `/${this.databaseName}` }).toString();
    this.redisPrefix = `${process.env.REDIS_PREFIX ?? 'cbtest'}:${name}-spec`;
    this.overrides = { DATABASE_URL: this.databaseUrl, REDIS_PREFIX: this.redisPrefix };
  }

  /** Runs one statement on the maintenance database (create, drop, allow or refuse connections). */
  async maintenanceQuery(sql: string, parameters: unknown[] = []): Promise<void> {
    const maintenance = new URL(this.baseUrl.toString());
    maintenance.pathname = '/postgres';
    const client = new Client({ connectionString: maintenance.toString() });
    await client.connect();
    try {
      await client.query(sql, parameters);
    } finally {
      await client.end();
    }
  }

  async setUp(): Promise<void> {
    await this.maintenanceQuery(`DROP DATABASE IF EXISTS "${this.databaseName}" WITH (FORCE)`);
    await runMigrations(this.databaseUrl);
    this.db = new Client({ connectionString: this.databaseUrl });
    await this.db.connect();
    const redisUrl = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    this.queue = new Queue(DELIVERY_QUEUE, {
      connection: { host: redisUrl.hostname, port: Number(redisUrl.port || 6379) },
      prefix: `${this.redisPrefix}:bull`,
    });
  }

  async tearDown(): Promise<void> {
    await this.queue?.obliterate({ force: true }).catch(() => undefined);
    await this.queue?.close();
    await this.db?.end();
    await this.maintenanceQuery(`DROP DATABASE IF EXISTS "${this.databaseName}" WITH (FORCE)`);
  }
}
