import Redis from 'ioredis';
import { dropRunDatabases } from './worker-databases';

export default async function globalTeardown(): Promise<void> {
  // Once per run, however many projects name this teardown.
  if (process.env.CALLBACKS_TEST_RUN !== 'set-up') return;
  process.env.CALLBACKS_TEST_RUN = 'torn-down';
  const databaseUrl = process.env.TEST_RUN_DATABASE_URL;
  const prefix = process.env.TEST_RUN_REDIS_PREFIX;
  if (databaseUrl && new URL(databaseUrl).pathname.startsWith('/callbacks_test_')) await dropRunDatabases(databaseUrl);
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
