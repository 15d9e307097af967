import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { isPendingSql } from '@app/persistence';
import { type DeliveryJobData, DeliveryProducer, pendingRowStep } from '@app/runtime';

/** Pending rows are re-enqueued in chunks, oldest first, so a long pause resumes with bounded pipelines. */
const RESUME_CHUNK = 1000;

interface PendingRow {
  seq: string;
  account_id: number;
  series: number;
  series_attempts: number;
}

/**
 * What pausing, resuming and deleting a destination does to its deliveries. While paused, a job ends
 * without an attempt and leaves its row pending with no next_attempt_at; resume dates those rows again
 * and enqueues every pending step in seq order (the order ingest accepted them), so they go in order.
 * Job ids are deterministic, so a step whose job is still waiting is not enqueued twice.
 */
@Injectable()
export class DestinationDeliveries {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly producer: DeliveryProducer,
  ) {}

  /** Ends what was still pending for a deleted destination, saying why. */
  async failPending(manager: EntityManager, destinationId: string, reason: string): Promise<void> {
    await manager.query(
      `UPDATE destination_deliveries SET status = 'failed', last_error = $2, next_attempt_at = NULL, updated_at = now()
        WHERE destination_id = $1 AND ${isPendingSql()}`,
      [destinationId, reason],
    );
  }

  async resumePrimary(accountId: number): Promise<void> {
    await this.resumeRows(
      (after) =>
        this.dataSource.query<PendingRow[]>(
          `UPDATE events SET next_attempt_at = COALESCE(next_attempt_at, now())
            WHERE seq IN (SELECT seq FROM events WHERE account_id = $1 AND ${isPendingSql()} AND seq > $2::bigint ORDER BY seq LIMIT ${RESUME_CHUNK})
            RETURNING seq::text AS seq, account_id, series, series_attempts`,
          [accountId, after],
        ),
      (row) => pendingRowStep(row),
    );
  }

  async resumeDestination(accountId: number, destinationId: string): Promise<void> {
    await this.resumeRows(
      (after) =>
        this.dataSource.query<PendingRow[]>(
          `UPDATE destination_deliveries SET next_attempt_at = COALESCE(next_attempt_at, now())
            WHERE destination_id = $1 AND event_seq IN (
                  SELECT event_seq FROM destination_deliveries
                   WHERE destination_id = $1 AND account_id = $2 AND ${isPendingSql()} AND event_seq > $3::bigint
                   ORDER BY event_seq LIMIT ${RESUME_CHUNK})
            RETURNING event_seq::text AS seq, account_id, series, series_attempts`,
          [destinationId, accountId, after],
        ),
      (row) => ({ ...pendingRowStep(row), destinationId }),
    );
  }

  private async resumeRows(nextChunk: (after: string) => Promise<[PendingRow[], number] | PendingRow[]>, stepOf: (row: PendingRow) => DeliveryJobData): Promise<void> {
    let after = '0';
    for (;;) {
      const answer = await nextChunk(after);
      // UPDATE … RETURNING answers [rows, count] through the pg driver.
      const rows = (Array.isArray(answer[0]) ? answer[0] : answer) as PendingRow[];
      if (rows.length === 0) return;
      // RETURNING does not keep the subquery's order.
      rows.sort((a, b) => (BigInt(a.seq) < BigInt(b.seq) ? -1 : 1));
      await this.producer.enqueue(rows.map(stepOf));
      if (rows.length < RESUME_CHUNK) return;
      after = rows[rows.length - 1].seq;
    }
  }
}
