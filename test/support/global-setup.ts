import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import Redis from 'ioredis';
import { runMigrations } from '../../libs/persistence/src/migrate';
import { copyForWorkers } from './worker-databases';

const POSTGRES = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

async function requireServices(): Promise<void> {
  const client = new Client({ connectionString: POSTGRES, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
  } catch (error) {
    throw new Error(
      `The e2e tests need PostgreSQL at ${POSTGRES} (${(error as Error).message}).\n` +
        `Start it with: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start`,
    );
  } finally {
    await client.end().catch(() => undefined);
  }
  const redis = new Redis(REDIS, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    throw new Error(
      `The e2e tests need Redis at ${REDIS} (${(error as Error).message}).\n` +
        `Start it with: redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no`,
    );
  } finally {
    redis.disconnect();
  }
}

/**
 * Each run gets its own database and Redis prefix, so parallel runs and leftovers never collide, and each
 * of its Jest workers a copy of that database and a prefix under it (use-worker-namespace.ts picks them).
 * Runs once per run even when several projects name it (the cluster project calls it too).
 */
export default async function globalSetup(globalConfig: { maxWorkers: number }): Promise<void> {
  if (process.env.CALLBACKS_TEST_RUN === 'set-up') return;
  await requireServices();
  const runId = `${Date.now().toString(36)}_${process.pid}`;
  const databaseUrl = new URL(POSTGRES);
  databaseUrl.pathname = `/callbacks_test_${runId}`;
  process.env.DATABASE_URL = databaseUrl.toString();
  process.env.REDIS_URL = REDIS;
  process.env.REDIS_PREFIX = `cbtest_${runId}`;
  process.env.ADMIN_TOKEN = 'test-admin-token-0123456789';
  process.env.INGEST_TOKEN = 'test-ingest-token-0123456789,test-ingest-token-second';
  process.env.ALLOW_PRIVATE_TARGETS = 'true';
  process.env.LOG_LEVEL = process.env.LOG_LEVEL ?? 'silent';
  process.env.NODE_ENV = 'test';
  // A fresh key per run: every secret the suites store is sealed with it (apps refuse to start without one).
  process.env.SECRETS_KEY = `test:${randomBytes(32).toString('base64')}`;
  // Suites seed old final events on purpose; the worker's hourly retention round must not take them.
  process.env.RETENTION_DAYS = '3650';
  // An account row goes 30 s after its deletion was asked for by default (no late event of it can then
  // arrive); the suites' deletions would wait that long for nothing. account-deletion-settle tests the wait.
  process.env.ACCOUNT_DELETION_SETTLE = '200ms';
  await runMigrations(process.env.DATABASE_URL);
  await copyForWorkers(process.env.DATABASE_URL, globalConfig.maxWorkers);
  process.env.TEST_RUN_DATABASE_URL = process.env.DATABASE_URL;
  process.env.TEST_RUN_REDIS_PREFIX = process.env.REDIS_PREFIX;
  process.env.CALLBACKS_TEST_RUN = 'set-up';
}
