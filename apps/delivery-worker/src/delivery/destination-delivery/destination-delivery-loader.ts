import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { DestinationFormat, DestinationType, EventStatus } from '@app/persistence';
import { Batcher, type Settled } from '@app/runtime';
import { pendingEventOf, type PendingEvent } from '../loading/event-loader';

/** An extra destination as its delivery reads it: the credentials still sealed, opened only right before the call. */
export interface DestinationRow {
  id: string;
  accountId: number;
  type: DestinationType;
  sealedTarget: string;
  targetShown: string;
  sealedAuth: string | null;
  sealedSigningSecret: string;
  contentType: string;
  format: DestinationFormat;
  ordering: 'none' | 'subject';
  maxPerSecond: number | null;
  paused: boolean;
  failingSince: Date | null;
  disabledAt: Date | null;
  disabledReason: string | null;
  deletedAt: Date | null;
}

/**
 * One event's delivery to one extra destination, as loaded for a step. `event` is the delivery row
 * seen through the event's shape (its status, series and attempts are the delivery's), so the retry
 * schedule and the step guard are the primary's own code.
 */
export interface LoadedDestinationDelivery {
  event: PendingEvent;
  erased: boolean;
  /** null: the destination row is gone altogether. */
  destination: DestinationRow | null;
}

/**
 * The delivery row, its event and its destination in one statement; the destination is read on every
 * step (not cached), so a pause, a resume or a deletion holds from the next step on, in every worker.
 */
const LOAD_SQL = `
  SELECT d.event_seq::text AS seq, d.destination_id, d.account_id, d.status, d.attempts, d.series, d.series_attempts,
         e.event_id, e.action, e.message::text AS message_text, e.created_at, e.erased,
         x.id AS destination_row, x.type, x.target, x.target_shown, x.auth, x.signing_secret, x.content_type, x.format,
         x.ordering, x.max_per_second, x.paused, x.failing_since, x.disabled_at, x.disabled_reason, x.deleted_at
    FROM unnest($1::bigint[], $2::varchar[]) AS k(seq, destination_id)
    JOIN destination_deliveries d ON d.event_seq = k.seq AND d.destination_id = k.destination_id
    JOIN events e ON e.seq = d.event_seq
    LEFT JOIN destinations x ON x.id = d.destination_id`;

interface LoadedRow {
  seq: string;
  destination_id: string;
  account_id: number;
  status: EventStatus;
  attempts: number;
  series: number;
  series_attempts: number;
  event_id: string;
  action: string;
  message_text: string;
  created_at: Date;
  erased: boolean;
  destination_row: string | null;
  type: DestinationType;
  target: string;
  target_shown: string;
  auth: string | null;
  signing_secret: string;
  content_type: string;
  format: DestinationFormat;
  ordering: string;
  max_per_second: number | null;
  paused: boolean;
  failing_since: Date | null;
  disabled_at: Date | null;
  disabled_reason: string | null;
  deleted_at: Date | null;
}

function keyOf(seq: string, destinationId: string): string {
  return `${seq}/${destinationId}`;
}

function loadedOf(row: LoadedRow): LoadedDestinationDelivery {
  // The delivery row's status and counters stand where the event's would: the step guard reads them.
  const event = pendingEventOf({ ...row, test: false });
  const destination: DestinationRow | null =
    row.destination_row === null
      ? null
      : {
          id: row.destination_id,
          accountId: row.account_id,
          type: row.type,
          sealedTarget: row.target,
          targetShown: row.target_shown,
          sealedAuth: row.auth,
          sealedSigningSecret: row.signing_secret,
          contentType: row.content_type,
          format: row.format,
          ordering: row.ordering === 'subject' ? 'subject' : 'none',
          maxPerSecond: row.max_per_second,
          paused: row.paused,
          failingSince: row.failing_since,
          disabledAt: row.disabled_at,
          disabledReason: row.disabled_reason,
          deletedAt: row.deleted_at,
        };
  return { event, erased: row.erased, destination };
}

/** Destination deliveries of the jobs in hand, read in batches shared by all concurrent jobs (as EventLoader). */
@Injectable()
export class DestinationDeliveryLoader {
  private readonly loader: Batcher<{ seq: string; destinationId: string }, LoadedDestinationDelivery | null>;

  constructor(@InjectDataSource() dataSource: DataSource) {
    this.loader = new Batcher(
      async (keys): Promise<Settled<LoadedDestinationDelivery | null>[]> => {
        const rows = await dataSource.query<LoadedRow[]>(LOAD_SQL, [keys.map((key) => key.seq), keys.map((key) => key.destinationId)]);
        const byKey = new Map(rows.map((row) => [keyOf(row.seq, row.destination_id), loadedOf(row)]));
        return keys.map((key) => ({ ok: true, value: byKey.get(keyOf(key.seq, key.destinationId)) ?? null }));
      },
      { maxBatch: 500, maxInFlight: 2, lingerMs: 0 },
    );
  }

  load(seq: string, destinationId: string): Promise<LoadedDestinationDelivery | null> {
    return this.loader.submit({ seq, destinationId });
  }

  async drain(): Promise<void> {
    await this.loader.drain();
  }
}
