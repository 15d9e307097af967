import { Client } from 'pg';
import Redis from 'ioredis';

export default async function globalTeardown(): Promise<void> {
  // Once per run, however many projects name this teardown.
  if (process.env.CALLBACKS_TEST_RUN !== 'set-up') return;
  process.env.CALLBACKS_TEST_RUN = 'torn-down';
  const databaseUrl = process.env.DATABASE_URL;
  const prefix = process.env.REDIS_PREFIX;
  if (databaseUrl && new URL(databaseUrl).pathname.startsWith('/callbacks_test_')) {
    const databaseName = new URL(databaseUrl).pathname.slice(1);
    const maintenance = new URL(databaseUrl);
    maintenance.pathname = '/postgres';
    const client = new Client({ connectionString: maintenance.toString() });
    await client.connect();
    try {
      await client.query(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`);
    } finally {
      await client.end();
    }
  }
  if (prefix?.startsWith('cbtest_')) {
    const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    try {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
        cursor = next;
        if (keys.length) await redis.unlink(...keys);
      } while (cursor !== '0');
    } finally {
      redis.disconnect();
    }
  }
}
