import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The daily events partitions lose their index on `created_at`: every stored event paid a btree insert
 * into it (66 bytes of WAL an event, `bench/path-cost`), while every reader of a time span on those days
 * finds its rows by seq (the seq holds the acceptance time to the millisecond): the event list through
 * `timeWindowedSelect`, the tallies' counts through `eventsAcceptedIn`, the rows out of line through
 * `events_out_of_line_idx`. The default and legacy partitions keep an index of their own on created_at:
 * retention's trim walks them by time.
 *
 * Built inside the migration's transaction: on a large default or legacy partition, create
 * `events_default_created_at_idx` / `events_legacy_created_at_idx` beforehand with CREATE INDEX CONCURRENTLY.
 */
export class EventsCreatedAtOffDailyPartitions1766200000000 implements MigrationInterface {
  name = 'EventsCreatedAtOffDailyPartitions1766200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const tables = await this.residualPartitions(queryRunner);
    for (const table of tables) await queryRunner.query(`CREATE INDEX IF NOT EXISTS ${table}_created_at_idx_own ON ${table} (created_at)`);
    await queryRunner.query(`DROP INDEX IF EXISTS events_created_at_idx`);
    for (const table of tables) {
      // A legacy table may still have its own pre-partitioning index under that name, which serves as well.
      const [{ taken }] = (await queryRunner.query(`SELECT to_regclass($1) IS NOT NULL AS taken`, [`${table}_created_at_idx`])) as { taken: boolean }[];
      await queryRunner.query(taken ? `DROP INDEX ${table}_created_at_idx_own` : `ALTER INDEX ${table}_created_at_idx_own RENAME TO ${table}_created_at_idx`);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of await this.residualPartitions(queryRunner)) await queryRunner.query(`DROP INDEX IF EXISTS ${table}_created_at_idx`);
    await queryRunner.query(`CREATE INDEX IF NOT EXISTS events_created_at_idx ON events (created_at)`);
  }

  /** The partitions retention trims row by row: the default one and, until it is emptied and dropped, the legacy one. */
  private async residualPartitions(queryRunner: QueryRunner): Promise<string[]> {
    const rows = (await queryRunner.query(`SELECT relname FROM pg_class WHERE relname IN ('events_default', 'events_legacy') AND relkind = 'r' ORDER BY 1`)) as {
      relname: string;
    }[];
    return rows.map((row) => row.relname);
  }
}
