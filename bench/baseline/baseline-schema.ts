import { Client } from 'pg';

/** The framework-free pipeline's own tables, in the bench database beside the service's. */
export async function createBaselineTables(databaseUrl: string): Promise<void> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`
      CREATE TABLE IF NOT EXISTS bench_baseline_events (
        id bigserial PRIMARY KEY,
        event_id text NOT NULL UNIQUE,
        account_id integer NOT NULL,
        action text NOT NULL,
        message jsonb NOT NULL,
        status text NOT NULL DEFAULT 'queued',
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE IF NOT EXISTS bench_baseline_attempts (
        event_id bigint NOT NULL,
        response_status integer NOT NULL,
        duration_ms integer NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      );`);
  } finally {
    await client.end();
  }
}
