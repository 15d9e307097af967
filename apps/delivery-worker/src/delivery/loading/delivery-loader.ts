import { Injectable } from '@nestjs/common';
import { deliverySteps, type EventStatus, partitions, PRIMARY_DESTINATION_ID, Sql } from '@app/persistence';
import { Batcher } from '@app/runtime';

/** One delivery at its step as a worker reads it: its own state and what it delivers (`messageText`: the stored JSON, byte for byte). */
export interface PendingDelivery {
  seq: string;
  destinationId: string;
  accountId: number;
  status: EventStatus;
  attempts: number;
  series: number;
  seriesAttempts: number;
  expiresAt: Date | null;
  eventId: string;
  action: string;
  messageText: string;
  createdAt: Date;
  /** createdAt as stored, to the microsecond: what the books count from. */
  acceptedAt: string;
  /** A test event (send_test_event). */
  test: boolean;
  /** Cleared by an erasure (CONTRACT §12): never called. */
  erased: boolean;
  /** Its open row exists (docs/delivery-model.md): ending the delivery removes it. */
  open: boolean;
  /** Its subject, when its destination orders by subject. */
  subject: string | null;
}

function pendingOf(row: deliverySteps.LoadedDeliveryRow): PendingDelivery {
  return {
    seq: row.seq,
    destinationId: row.destination_id,
    accountId: row.account_id,
    status: row.status,
    attempts: row.attempts,
    series: row.series,
    seriesAttempts: row.series_attempts,
    expiresAt: row.expires_at,
    eventId: row.event_id,
    action: row.action,
    messageText: row.message_text,
    createdAt: row.created_at,
    acceptedAt: row.accepted_at,
    test: row.test,
    erased: row.erased,
    open: row.has_open,
    subject: row.subject,
  };
}

/** What a job names: its event and the destination the step is for. */
export interface DeliveryKey {
  seq: string;
  destinationId: string;
}

function keyOf(seq: string, destinationId: string): string {
  return `${seq}/${destinationId}`;
}

/**
 * Loading a delivery: the rows of the jobs in hand, read in batches shared by all concurrent jobs (up to
 * 500 keys a statement, two statements in flight, no linger), so a busy worker makes a few round trips
 * per batch instead of one per job.
 */
@Injectable()
export class DeliveryLoader {
  private readonly loader: Batcher<DeliveryKey, PendingDelivery | null>;

  constructor(sql: Sql) {
    this.loader = new Batcher(
      async (keys) => {
        const unique = [...new Map(keys.map((key) => [keyOf(key.seq, key.destinationId), key])).values()];
        const [lowSeq, highSeq] = partitions.seqRange(unique.map((key) => key.seq));
        const rows = await sql.rows(deliverySteps.LOAD_DELIVERIES, {
          seqs: unique.map((key) => key.seq),
          destinationIds: unique.map((key) => key.destinationId),
          lowSeq,
          highSeq,
        });
        const byKey = new Map(rows.map((row) => [keyOf(row.seq, row.destination_id), pendingOf(row)]));
        return keys.map((key) => ({ ok: true, value: byKey.get(keyOf(key.seq, key.destinationId)) ?? null }));
      },
      { maxBatch: 500, maxInFlight: 2, lingerMs: 0 },
    );
  }

  /** The delivery, or null when there is none (its event gone with retention, or never stored for that destination). */
  load(seq: string, destinationId: string = PRIMARY_DESTINATION_ID): Promise<PendingDelivery | null> {
    return this.loader.submit({ seq, destinationId });
  }

  /** Waits for every load handed in so far (shutdown). */
  async drain(): Promise<void> {
    await this.loader.drain();
  }
}
