import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Pool } from 'pg';
import { PERMISSION_KEYS } from '@app/payloads/actions';
import { openApiQuery } from '@app/signing/open-api.signature';
import { waitFor } from '@app/testing';
import { type AppName, AppProcess, REPOSITORY_ROOT } from './app-process';
import { DrillReceiver } from './drill-receiver';
import { ADMIN_TOKEN, appEnvironment, HANG_MS, INGEST_TOKEN } from './drill-settings';
import { EventLoad } from './event-load';
import type { PostgresInstance } from './postgres-instance';
import { RedisInstance } from './redis-instance';

const run = promisify(execFile);

export type StatusCounts = Record<string, number>;

export interface StackOptions {
  retrySchedule: string;
  /** Settings added to (or overriding) the shared ones for every app of this drill. */
  env?: Record<string, string>;
}

/**
 * What one drill runs against: a database of its own on the run's PostgreSQL, a fresh redis-server, the
 * receiver, a config-api process, and an account whose callbacks (JSON, every action) go to the receiver,
 * configured through the signed Open API as an API user would. Apps the drill starts are tracked and
 * killed by close().
 */
export class DrillStack {
  readonly apps: AppProcess[] = [];
  readonly receiver = new DrillReceiver(HANG_MS);
  private accountId = 0;
  private readonly pool: Pool;

  private constructor(
    readonly name: string,
    readonly postgres: PostgresInstance,
    readonly redis: RedisInstance,
    readonly databaseUrl: string,
    private readonly options: StackOptions,
  ) {
    this.pool = new Pool({ connectionString: databaseUrl, max: 2, connectionTimeoutMillis: 3_000 });
    // Idle connections die when a drill stops PostgreSQL; the pool drops them and reconnects later.
    this.pool.on('error', () => undefined);
  }

  static async open(postgres: PostgresInstance, name: string, options: StackOptions): Promise<DrillStack> {
    const redis = await RedisInstance.create();
    const stack = new DrillStack(name, postgres, redis, postgres.url(`drill_${name.replace(/\W/g, '_')}`), options);
    try {
      await stack.migrate();
      await stack.receiver.start();
      const configApi = await stack.startApp('config-api');
      await stack.createAccount(configApi.url);
    } catch (error) {
      await stack.close();
      throw error;
    }
    return stack;
  }

  environment(extra: Record<string, string> = {}): Record<string, string> {
    return appEnvironment(this.databaseUrl, this.redis.url, { RETRY_SCHEDULE: this.options.retrySchedule, ...this.options.env, ...extra });
  }

  async startApp(app: AppName, { waitUntilReady = true, env = {} }: { waitUntilReady?: boolean; env?: Record<string, string> } = {}): Promise<AppProcess> {
    const label = `${this.name}/${app}#${this.apps.filter((started) => started.app === app).length + 1}`;
    const started = await AppProcess.start(app, label, this.environment(env), { waitUntilReady });
    this.apps.push(started);
    return started;
  }

  async startApps(app: AppName, count: number): Promise<AppProcess[]> {
    const started: AppProcess[] = [];
    for (let index = 0; index < count; index += 1) started.push(await this.startApp(app));
    return started;
  }

  /** A producer posting this drill's events to the given ingest processes. */
  load(ingest: AppProcess[], batchSize: number, subjects?: number): EventLoad {
    return new EventLoad({
      ingestUrls: ingest.map((app) => app.url),
      accountId: this.accountId,
      ingestToken: INGEST_TOKEN,
      idPrefix: `drill-${this.name}`,
      batchSize,
      subjects,
    });
  }

  /** Sets the drill account's delivery option straight in its row (before the worker starts, which reads it then). */
  async orderBySubject(): Promise<void> {
    await this.query(`UPDATE destinations SET ordering = 'subject', version = version + 1 WHERE account_id = $1 AND id = 'primary'`, [this.accountId]);
  }

  async query<T>(sql: string, parameters: unknown[] = []): Promise<T[]> {
    const result = await this.pool.query(sql, parameters);
    return result.rows as T[];
  }

  /** Events of this drill by status (their primary delivery's), straight from PostgreSQL. */
  async statusCounts(): Promise<StatusCounts> {
    const rows = await this.query<{ status: string; count: string }>(`SELECT status, count(*) AS count FROM deliveries WHERE destination_id = 'primary' GROUP BY status`);
    return Object.fromEntries(rows.map((row) => [row.status, Number(row.count)]));
  }

  /** Polls the status counts until `done` holds; fails after `timeoutMs` with the last counts seen. */
  async waitForStatuses(description: string, done: (counts: StatusCounts) => boolean, timeoutMs: number): Promise<StatusCounts> {
    let last: StatusCounts = {};
    try {
      return await waitFor(
        description,
        async () => {
          last = await this.statusCounts();
          return done(last) ? last : undefined;
        },
        { timeoutMs, intervalMs: 500 },
      );
    } catch (error) {
      throw new Error(`${error instanceof Error ? error.message : String(error)} (last statuses: ${JSON.stringify(last)})`);
    }
  }

  /** Apps of this drill that exited although the drill did not stop them. */
  unexpectedExits(expected: AppProcess[] = []): AppProcess[] {
    return this.apps.filter((app) => !app.running && !expected.includes(app));
  }

  async close(): Promise<void> {
    for (const app of this.apps) await app.stop();
    await this.receiver.stop().catch(() => undefined);
    await this.pool.end().catch(() => undefined);
    await this.redis.stop();
  }

  private async migrate(): Promise<void> {
    await run(process.execPath, ['dist/scripts/migrate.js'], {
      cwd: REPOSITORY_ROOT,
      env: { PATH: process.env.PATH ?? '', DATABASE_URL: this.databaseUrl, LOG_LEVEL: 'warn' },
      timeout: 60_000,
    });
  }

  private async createAccount(configApiUrl: string): Promise<void> {
    const account = (await this.call(`${configApiUrl}/admin/v1/accounts`, { email: `drill-${this.name}@example.com` }, 201, {
      authorization: `Bearer ${ADMIN_TOKEN}`,
    })) as { id: number; email: string; open_api_token: string; signing_secret: string };
    this.accountId = account.id;
    this.receiver.verifyWith(account.signing_secret);
    const credentials = { email: account.email, openApiToken: account.open_api_token };
    const openApi = (operation: string, body: unknown) =>
      this.call(`${configApiUrl}/open_api_v1/${operation}?${new URLSearchParams(openApiQuery(credentials)).toString()}`, body, 200);
    await openApi('set_url', { push_url: this.receiver.url });
    await openApi('set_permissions', { permissions: Object.fromEntries(PERMISSION_KEYS.map((key) => [key, true])) });
    await openApi('set_push_content_type', { push_content_type: 'JSON' });
  }

  private async call(url: string, body: unknown, expected: number, headers: Record<string, string> = {}): Promise<unknown> {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await response.text();
    if (response.status !== expected) throw new Error(`${url.split('?')[0]} answered ${response.status}: ${text}`);
    return JSON.parse(text) as unknown;
  }
}
