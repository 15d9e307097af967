import type { MigrationInterface, QueryRunner } from 'typeorm';
import { LATENCY_BUCKETS, latencyBucketSql } from '../stats/delivery-rollup';

/**
 * Event counts per status, per UTC minute and per UTC hour of creation, kept exact on every change of
 * `events`, so `GET /admin/v1/stats` over every account reads a few hundred small rows instead of
 * counting the whole log (7.7 s on 10 million events before this). Reading side: stats/books.statements.ts today.
 *
 * - `event_tallies`: one row per (granularity, bucket start, status, stripe) with the number of events
 *   and, for `delivered`, the latency histogram of the delivery rollups (same buckets, so the stats and
 *   the series agree). Hour rows answer whole hours; minute rows the whole minutes before a window's
 *   first hour. `stripe` is the writing backend's pid: ingest and worker transactions each add to rows
 *   of their own and never wait on each other's commit; retention folds past buckets into stripe 0.
 * - statement-level triggers with transition tables on the partitioned `events`: one upsert per
 *   statement, whatever wrote it (ingest, worker, redelivery, tools). Partitions named directly (the
 *   retention trims, day creation moving rows between partitions) fire no trigger: those paths account
 *   for themselves through `tally_event_rows(...)`.
 * - PL/pgSQL throughout: its statements keep their plans for the session (an SQL function's INSERT
 *   would be planned again on every call).
 * - the tallies of the events that exist now, computed once.
 */
export class EventStatusTallies1764400000000 implements MigrationInterface {
  name = 'EventStatusTallies1764400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const q = (sql: string) => queryRunner.query(sql) as Promise<unknown>;
    await q(`
      CREATE TABLE event_tallies (
        granularity varchar(8) NOT NULL,
        bucket_start timestamptz NOT NULL,
        status varchar(16) NOT NULL,
        stripe integer NOT NULL,
        events bigint NOT NULL,
        latency_counts bigint[],
        PRIMARY KEY (granularity, bucket_start, status, stripe),
        CONSTRAINT event_tallies_granularity_check CHECK (granularity IN ('minute', 'hour')),
        CONSTRAINT event_tallies_latency_counts_check CHECK (latency_counts IS NULL OR cardinality(latency_counts) = ${LATENCY_BUCKETS})
      )`);

    // Element-wise sum of two histograms; NULL (no histogram) is the neutral element.
    await q(`
      CREATE FUNCTION add_latency_counts(a bigint[], b bigint[]) RETURNS bigint[] LANGUAGE sql IMMUTABLE AS $$
        SELECT CASE WHEN a IS NULL THEN b WHEN b IS NULL THEN a ELSE ARRAY(SELECT x + y FROM unnest(a, b) AS t(x, y)) END
      $$`);
    await q(`CREATE AGGREGATE sum_latency_counts(bigint[]) (SFUNC = add_latency_counts, STYPE = bigint[])`);

    await q(`
      CREATE FUNCTION tally_event_rows(created timestamptz[], statuses text[], delivered timestamptz[], deltas int[])
      RETURNS void LANGUAGE plpgsql AS $$
      BEGIN
        ${tallyUpsert('unnest(created, statuses, delivered, deltas) AS src(created_at, status, delivered_at, delta)')};
      END $$`);

    const fromNew = '(SELECT created_at, status, delivered_at, 1 AS delta FROM new_rows) AS src';
    const fromOld = '(SELECT created_at, status, delivered_at, -1 AS delta FROM old_rows) AS src';
    const fromBoth = `(SELECT created_at, status, delivered_at, 1 AS delta FROM new_rows
                       UNION ALL
                       SELECT created_at, status, delivered_at, -1 FROM old_rows) AS src`;
    await q(`
      CREATE FUNCTION tally_event_changes() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          ${tallyUpsert(fromNew)};
        ELSIF TG_OP = 'UPDATE' THEN
          ${tallyUpsert(fromBoth)};
        ELSE
          ${tallyUpsert(fromOld)};
        END IF;
        RETURN NULL;
      END $$`);
    await q(`CREATE TRIGGER events_tally_insert AFTER INSERT ON events REFERENCING NEW TABLE AS new_rows
               FOR EACH STATEMENT EXECUTE FUNCTION tally_event_changes()`);
    // No column list: PostgreSQL allows none on an UPDATE trigger with transition tables. Statements that
    // leave status, delivered_at and created_at alone net out to nothing written.
    await q(`CREATE TRIGGER events_tally_update AFTER UPDATE ON events REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
               FOR EACH STATEMENT EXECUTE FUNCTION tally_event_changes()`);
    await q(`CREATE TRIGGER events_tally_delete AFTER DELETE ON events REFERENCING OLD TABLE AS old_rows
               FOR EACH STATEMENT EXECUTE FUNCTION tally_event_changes()`);
    await q(`
      CREATE FUNCTION clear_event_tallies() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM event_tallies;
        RETURN NULL;
      END $$`);
    await q(`CREATE TRIGGER events_tally_truncate AFTER TRUNCATE ON events FOR EACH STATEMENT EXECUTE FUNCTION clear_event_tallies()`);

    // What exists now (one scan of the log: on a large installation, the slow part of this migration).
    await q(tallyUpsert('(SELECT created_at, status, delivered_at, 1 AS delta FROM events) AS src'));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const trigger of ['events_tally_insert', 'events_tally_update', 'events_tally_delete', 'events_tally_truncate']) {
      await queryRunner.query(`DROP TRIGGER IF EXISTS ${trigger} ON events`);
    }
    await queryRunner.query(`DROP FUNCTION IF EXISTS tally_event_changes(), clear_event_tallies()`);
    await queryRunner.query(`DROP FUNCTION IF EXISTS tally_event_rows(timestamptz[], text[], timestamptz[], int[])`);
    await queryRunner.query(`DROP AGGREGATE IF EXISTS sum_latency_counts(bigint[])`);
    await queryRunner.query(`DROP FUNCTION IF EXISTS add_latency_counts(bigint[], bigint[])`);
    await queryRunner.query(`DROP TABLE IF EXISTS event_tallies`);
  }
}

/**
 * Adds the rows of `source` (created_at, status, delivered_at, delta) to the tallies: summed per bucket,
 * status and latency bucket first, so an UPDATE that leaves status and delivered_at alone writes
 * nothing; one row per (granularity, bucket, status) of this backend's stripe, upserted in key order.
 */
function tallyUpsert(source: string): string {
  const histogram = Array.from({ length: LATENCY_BUCKETS }, (_, index) => `COALESCE(sum(d.delta) FILTER (WHERE d.latency = ${index}), 0)`).join(', ');
  return `INSERT INTO event_tallies AS t (granularity, bucket_start, status, stripe, events, latency_counts)
          SELECT d.granularity, d.bucket_start, d.status, pg_backend_pid(), sum(d.delta),
                 CASE WHEN d.status = 'delivered' THEN ARRAY[${histogram}]::bigint[] END
            FROM (SELECT g.granularity, date_trunc(g.granularity, r.created_at, 'UTC') AS bucket_start, r.status, r.latency, sum(r.delta) AS delta
                    FROM (SELECT src.created_at, src.status::text AS status, src.delta,
                                 CASE WHEN src.status = 'delivered' AND src.delivered_at IS NOT NULL
                                      THEN ${latencyBucketSql('src.delivered_at', 'src.created_at')} END AS latency
                            FROM ${source}) AS r
                   CROSS JOIN (VALUES ('hour'), ('minute')) AS g(granularity)
                   GROUP BY 1, 2, 3, 4
                  HAVING sum(r.delta) <> 0) AS d
           GROUP BY d.granularity, d.bucket_start, d.status
           ORDER BY d.granularity, d.bucket_start, d.status
          ON CONFLICT (granularity, bucket_start, status, stripe) DO UPDATE
             SET events = t.events + excluded.events,
                 latency_counts = add_latency_counts(t.latency_counts, excluded.latency_counts)`;
}
