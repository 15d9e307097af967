import type { Logger } from '@nestjs/common';
import type { DataSource, QueryRunner } from 'typeorm';
import { loggableErrorText } from '@app/runtime';

/**
 * Runs `work` on one connection while holding a session advisory lock; answers null at once when another
 * process holds it. Used by the lock-guarded maintenance jobs (partitions ahead, retention).
 */
export async function withAdvisoryLock<T>(
  dataSource: DataSource,
  key: number,
  logger: Logger,
  work: (runner: QueryRunner) => Promise<T>,
): Promise<T | null> {
  const runner = dataSource.createQueryRunner();
  let pid: number | null = null;
  try {
    const [lock] = (await runner.query('SELECT pg_try_advisory_lock($1) AS locked, pg_backend_pid() AS pid', [key])) as {
      locked: boolean;
      pid: number;
    }[];
    if (!lock.locked) return null;
    pid = lock.pid;
    return await work(runner);
  } finally {
    try {
      if (pid !== null) await runner.query('SELECT pg_advisory_unlock($1)', [key]);
    } catch (error) {
      // A pooled connection still holding the lock would make every worker skip the job for as long as
      // it lives; ending its session frees the lock (and the pool drops the dead connection).
      logger.warn(`releasing advisory lock ${key} failed (${loggableErrorText(error)}); ending that session`);
      await dataSource.query('SELECT pg_terminate_backend($1)', [pid]).catch(() => undefined);
    } finally {
      await runner.release();
    }
  }
}
