import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ApiError, DeliveryProducer } from '@app/runtime';
import type { BulkRedeliverDto } from './admin-events.dto';
import { timeRange } from './timestamp';

/** Rows per UPDATE (and jobs per addBulk) in a bulk redelivery: bounded locks, bounded Redis pipelines. */
export const REDELIVERY_CHUNK = 1000;

/**
 * A new attempt series starting now. series + 1 makes every job of the old series stale (the worker
 * compares the job's pair with the row), and gives the new first job an id never used before, so
 * BullMQ's de-duplication cannot swallow it.
 */
const RESTART_SERIES = `
  series = events.series + 1, series_attempts = 0, status = 'queued', next_attempt_at = now(),
  last_error = NULL, delivered_at = NULL, updated_at = now()`;

interface RestartedRow {
  seq: string;
  series: number;
}

@Injectable()
export class RedeliveryService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly producer: DeliveryProducer,
  ) {}

  async redeliverOne(eventId: string): Promise<{ event_id: string; status: 'queued'; series: number }> {
    const [rows] = await this.dataSource.query<[RestartedRow[], number]>(
      `UPDATE events SET ${RESTART_SERIES} WHERE event_id = $1 RETURNING seq::text AS seq, series`,
      [eventId],
    );
    if (rows.length === 0) throw new ApiError(404, 'not_found', `event ${eventId} does not exist`);
    await this.enqueue(rows);
    return { event_id: eventId, status: 'queued', series: rows[0].series };
  }

  /**
   * Walks the account's events in that status from the newest down, REDELIVERY_CHUNK at a time, each
   * chunk one UPDATE and one addBulk. The seq cursor guarantees progress and termination; FOR UPDATE
   * makes a row whose status a worker changed meanwhile drop out instead of being restarted.
   */
  async redeliverAccount(accountId: number, body: BulkRedeliverDto): Promise<{ count: number }> {
    const { since, until } = timeRange(body.since, body.until);
    const exists = await this.dataSource.query<unknown[]>('SELECT 1 FROM accounts WHERE id = $1', [accountId]);
    if (exists.length === 0) throw new ApiError(404, 'not_found', `account ${accountId} does not exist`);

    let count = 0;
    let below: string | null = null;
    let redisUsable = true;
    for (;;) {
      const [rows]: [RestartedRow[], number] = await this.dataSource.query<[RestartedRow[], number]>(
        `WITH picked AS (
           SELECT seq FROM events
            WHERE account_id = $1 AND status = $2
              AND ($3::timestamptz IS NULL OR created_at >= $3)
              AND ($4::timestamptz IS NULL OR created_at < $4)
              AND ($5::bigint IS NULL OR seq < $5)
            ORDER BY seq DESC
            LIMIT $6
              FOR UPDATE
         )
         UPDATE events SET ${RESTART_SERIES}
           FROM picked
          WHERE events.seq = picked.seq
         RETURNING events.seq::text AS seq, events.series`,
        [accountId, body.status, since, until, below, REDELIVERY_CHUNK],
      );
      if (rows.length === 0) break;
      count += rows.length;
      // One failed Redis call is enough to know: the reconciler enqueues the rest from the rows.
      if (redisUsable) redisUsable = await this.enqueue(rows);
      below = rows.reduce((lowest, row) => (BigInt(row.seq) < BigInt(lowest) ? row.seq : lowest), rows[0].seq);
      if (rows.length < REDELIVERY_CHUNK) break;
    }
    return { count };
  }

  /** The rows are already restarted; when Redis is away the worker's reconciler enqueues them. */
  private enqueue(rows: readonly RestartedRow[]): Promise<boolean> {
    return this.producer.enqueue(rows.map((row) => ({ eventSeq: row.seq, series: row.series, attempt: 0 })));
  }
}
