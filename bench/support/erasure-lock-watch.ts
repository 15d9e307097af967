import { performance } from 'node:perf_hooks';
import { Client } from 'pg';

export interface LockWatch {
  /** The longest any erasure transaction was seen open: every row lock it took was held at most this long (plus one sample interval). */
  longestMs: number;
  transactions: number;
  sampleEveryMs: number;
}

/** The statements of an erasure step (apps/delivery-worker/src/tasks/erasure-runner.service.ts). */
const ERASURE_SQL = `(query LIKE '%callback_subject(action, message) = $1%FOR UPDATE%' OR query LIKE '%SET request_body = ''''%'
                      OR query LIKE '%erased = true%' OR query LIKE '%events_erased = events_erased%')`;

/**
 * Samples pg_stat_activity as fast as one connection allows, for the database's backends in a
 * transaction whose current or last statement is an erasure step's, and keeps each transaction's
 * longest age seen. Sampling, not tracing: a transaction shorter than one interval may be missed, and
 * an age is short of the truth by at most one interval.
 */
export async function watchErasureTransactions(databaseUrl: string): Promise<{ stop(): Promise<LockWatch> }> {
  const client = new Client({ connectionString: databaseUrl, application_name: 'erasure-lock-watch' });
  await client.connect();
  const database = new URL(databaseUrl).pathname.slice(1);
  const ages = new Map<string, number>();
  let samples = 0;
  let watching = true;
  const started = performance.now();
  const loop = (async () => {
    while (watching) {
      const { rows } = await client.query<{ tx: string; age_ms: number }>(
        `SELECT pid || '@' || xact_start AS tx, extract(epoch FROM clock_timestamp() - xact_start) * 1000 AS age_ms
           FROM pg_stat_activity
          WHERE datname = $1 AND xact_start IS NOT NULL AND pid <> pg_backend_pid() AND ${ERASURE_SQL}`,
        [database],
      );
      samples += 1;
      for (const row of rows) ages.set(row.tx, Math.max(ages.get(row.tx) ?? 0, Number(row.age_ms)));
    }
  })();
  return {
    async stop() {
      watching = false;
      await loop;
      await client.end();
      return {
        longestMs: Math.max(0, ...ages.values()),
        transactions: ages.size,
        sampleEveryMs: samples ? (performance.now() - started) / samples : 0,
      };
    },
  };
}
