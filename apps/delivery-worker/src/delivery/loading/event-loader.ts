import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { type EventStatus, GenericPlanPool, pendingSubjectNeighbourSql, preparedQuery, seqRange } from '@app/persistence';
import { Batcher, type Settled } from '@app/runtime';

/** The part of an event row a delivery needs; `messageText` is the stored JSON text, byte for byte. */
export interface PendingEvent {
  seq: string;
  eventId: string;
  accountId: number;
  action: string;
  messageText: string;
  status: EventStatus;
  attempts: number;
  series: number;
  seriesAttempts: number;
  createdAt: Date;
  /** A test event (send_test_event): pushed whatever the action's permission. */
  test: boolean;
  /** Cleared by an erasure (CONTRACT §12): never called (ErasureCheck). */
  erased: boolean;
}

const LOADED_COLUMNS = `e.seq::text AS seq, e.event_id, e.account_id, e.action, e.message::text AS message_text, e.status,
         e.attempts, e.series, e.series_attempts, e.created_at, e.test, e.erased`;

/**
 * Under one kept plan (GenericPlanPool): the batch's lowest and highest seq ($2, $3) let the executor
 * drop the other days at start, where a plan for the array's values cost more to make than to run.
 */
export const LOAD_SQL = `SELECT ${LOADED_COLUMNS} FROM events e WHERE e.seq = ANY($1::bigint[]) AND e.seq BETWEEN $2::bigint AND $3::bigint`;

/**
 * The load of events of ordered endpoints also answers their first ordering question (the earliest
 * pending event of the subject ahead of each), which would otherwise be a statement of its own per
 * batch of jobs (SubjectOrder.holdMs).
 */
const LOAD_WITH_AHEAD_SQL = `
  SELECT ${LOADED_COLUMNS}, a.seq::text AS ahead_seq, a.status AS ahead_status,
         a.next_attempt_at AS ahead_next_attempt_at, a.series_attempts AS ahead_series_attempts,
         a.alone AS ahead_alone
    FROM events e
    LEFT JOIN LATERAL (${pendingSubjectNeighbourSql({ accountId: 'e.account_id', action: 'e.action', message: 'e.message', seq: 'e.seq' }, '<')}) a ON true
   WHERE e.seq = ANY($1::bigint[])`;

/** Both loads: a batch of up to 500 seqs per statement, two statements in flight, no linger. */
const LOAD_BATCHING = { maxBatch: 500, maxInFlight: 2, lingerMs: 0 };

interface LoadedRow {
  seq: string;
  event_id: string;
  account_id: number;
  action: string;
  message_text: string;
  status: EventStatus;
  attempts: number;
  series: number;
  series_attempts: number;
  created_at: Date;
  test: boolean;
  erased: boolean;
}

interface LoadedWithAheadRow extends LoadedRow {
  ahead_seq: string | null;
  ahead_status: string | null;
  ahead_next_attempt_at: Date | null;
  ahead_series_attempts: number | null;
  ahead_alone: boolean | null;
}

/** The nearest pending event of the same subject on one side of an event (pendingSubjectNeighbourSql). */
export interface PendingNeighbour {
  seq: string;
  status: string;
  next_attempt_at: Date | null;
  series_attempts: number;
  /** No other event of the subject is pending on that side: for the one ahead, its end lets this event go. */
  alone: boolean;
}

/** An event of an ordered endpoint with the earliest event of its subject pending ahead of it when loaded. */
export interface OrderedLoad {
  event: PendingEvent;
  ahead: PendingNeighbour | undefined;
}

/** An events row as the delivery steps read it (the primary's load and a destination's). */
export function pendingEventOf(row: LoadedRow): PendingEvent {
  return {
    seq: row.seq,
    eventId: row.event_id,
    accountId: row.account_id,
    action: row.action,
    messageText: row.message_text,
    status: row.status,
    attempts: row.attempts,
    series: row.series,
    seriesAttempts: row.series_attempts,
    createdAt: row.created_at,
    test: row.test,
    erased: row.erased,
  };
}

function aheadOf(row: LoadedWithAheadRow): PendingNeighbour | undefined {
  if (row.ahead_seq === null || row.ahead_status === null || row.ahead_series_attempts === null) return undefined;
  return { seq: row.ahead_seq, status: row.ahead_status, next_attempt_at: row.ahead_next_attempt_at, series_attempts: row.ahead_series_attempts, alone: row.ahead_alone === true };
}

/**
 * Loading a delivery: the event rows of the jobs in hand, read in batches shared by all concurrent jobs,
 * so a busy worker makes a few round trips per batch instead of one per event.
 */
@Injectable()
export class EventLoader {
  private readonly loader: Batcher<string, PendingEvent | null>;
  private readonly orderedLoader: Batcher<string, OrderedLoad | null>;

  constructor(@InjectDataSource() dataSource: DataSource, keptPlans: GenericPlanPool) {
    const load = (seqs: string[]) => keptPlans.query<LoadedRow>('delivery-load-events', LOAD_SQL, [seqs, ...seqRange(seqs)]);
    this.loader = new Batcher((seqs) => this.loadBySeq(load, seqs, pendingEventOf), LOAD_BATCHING);
    // Planned for its values: a plan kept for the subject's pending neighbour would fix its index choice
    // to whatever the statistics said once (3 ms to plan, 1 ms to run, prepared to parse once).
    const loadWithAhead = (seqs: string[]) => preparedQuery<LoadedWithAheadRow>(dataSource, 'delivery-load-ordered-events', LOAD_WITH_AHEAD_SQL, [seqs]);
    const withAhead = (row: LoadedWithAheadRow): OrderedLoad => ({ event: pendingEventOf(row), ahead: aheadOf(row) });
    this.orderedLoader = new Batcher((seqs) => this.loadBySeq(loadWithAhead, seqs, withAhead), LOAD_BATCHING);
  }

  loadEvent(seq: string): Promise<PendingEvent | null> {
    return this.loader.submit(seq);
  }

  /** loadEvent for an ordered endpoint's job: the event and the earliest pending event of its subject ahead of it. */
  loadOrderedEvent(seq: string): Promise<OrderedLoad | null> {
    return this.orderedLoader.submit(seq);
  }

  /** Waits for every load handed in so far (shutdown). */
  async drain(): Promise<void> {
    await this.loader.drain();
    await this.orderedLoader.drain();
  }

  /** One statement for a batch of seqs; each caller gets its own event (mapped), or null when there is none. */
  private async loadBySeq<Row extends LoadedRow, Loaded>(read: (seqs: string[]) => Promise<Row[]>, seqs: string[], of: (row: Row) => Loaded): Promise<Settled<Loaded | null>[]> {
    const rows = await read([...new Set(seqs)]);
    const bySeq = new Map(rows.map((row) => [row.seq, of(row)]));
    return seqs.map((seq) => ({ ok: true, value: bySeq.get(seq) ?? null }));
  }
}
