import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import { freePort } from '@app/testing';
import type { ProcessSupervisor } from './process-supervisor';

export { freePort };

/** The compiled tree: this file runs as dist/bench/support/bench-environment.js. */
const DIST = join(__dirname, '..', '..');

export interface BenchEnvironment {
  runId: string;
  databaseUrl: string;
  redisUrl: string;
  redisPrefix: string;
  adminToken: string;
  ingestToken: string;
  /** SECRETS_KEY of every app the bench starts. */
  secretsKey: string;
}

/**
 * A database of its own (created and migrated by the built `scripts/migrate.js`, as a deployment
 * does) and a Redis prefix of its own; both are removed when the bench ends, however it ends.
 */
export async function prepareEnvironment(supervisor: ProcessSupervisor): Promise<BenchEnvironment> {
  const runId = `${Date.now().toString(36)}_${process.pid}`;
  const server = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const database = new URL(server);
  database.pathname = `/callbacks_bench_${runId}`;
  const environment: BenchEnvironment = {
    runId,
    databaseUrl: database.toString(),
    redisUrl: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
    redisPrefix: `cbbench_${runId}`,
    adminToken: `bench-admin-${runId}-0123456789`,
    ingestToken: `bench-ingest-${runId}-0123456789`,
    secretsKey: `bench:${randomBytes(32).toString('base64')}`,
  };
  supervisor.onCleanup('drop the bench database', () => dropDatabase(server, database.pathname.slice(1)));
  supervisor.onCleanup('remove the bench Redis keys', () => removeRedisKeys(environment.redisUrl, environment.redisPrefix));
  await promisify(execFile)(process.execPath, [join(DIST, 'scripts', 'migrate.js')], {
    cwd: join(DIST, '..'),
    env: { PATH: process.env.PATH ?? '', DATABASE_URL: environment.databaseUrl },
    timeout: 60_000,
  });
  return environment;
}

async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  const client = new Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

async function removeRedisKeys(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      if (keys.length) await redis.unlink(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

