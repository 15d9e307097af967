import { Injectable, Logger } from '@nestjs/common';
import { atStepSql, deliveryRollupCte, type EventStatus, GenericPlanPool, seqRange } from '@app/persistence';
import { Batcher, loggableErrorText, oneByOneOnFailure } from '@app/runtime';

export interface AttemptRow {
  eventSeq: string;
  series: number;
  /** 1-based across the event's whole life. */
  attempt: number;
  startedAt: Date;
  durationMs: number;
  url: string;
  requestHeaders: Record<string, string>;
  requestBody: string;
  responseStatus: number | null;
  responseHeaders: Record<string, string> | null;
  responseBody: string | null;
  error: string | null;
}

/**
 * A change to one event row, applied only while the row is still at the step the job was for
 * (same series and series_attempts, still pending): a redelivery or a duplicate job racing this one
 * can never be overwritten.
 */
export interface EventChange {
  seq: string;
  series: number;
  seriesAttempts: number;
  /** null keeps the current status (only last_error and next_attempt_at change). */
  status: EventStatus | null;
  /** 1 when this change records an attempt, made or skipped by the open breaker (attempts and series_attempts go up by one). */
  attempted: 0 | 1;
  nextAttemptAt: Date | null;
  deliveredAt: Date | null;
  lastError: string | null;
}

export interface Outcome {
  attempt: AttemptRow | null;
  change: EventChange;
}

/** The SET list of a guarded step change: `row` takes what `change` (a row of changeColumns' arrays) says. */
export function stepChangeSql(row: string, change: string): string {
  return `status = COALESCE(${change}.status, ${row}.status),
           attempts = ${row}.attempts + ${change}.attempted,
           series_attempts = ${row}.series_attempts + ${change}.attempted,
           next_attempt_at = ${change}.next_attempt_at,
           delivered_at = COALESCE(${change}.delivered_at, ${row}.delivered_at),
           last_error = ${change}.last_error,
           updated_at = now()`;
}

/** changeColumns' arrays as RECORD_SQL's $13–$20, and the names of their columns once unnested. */
export const CHANGE_ARRAYS = '$13::bigint[], $14::int[], $15::int[], $16::varchar[], $17::int[], $18::timestamptz[], $19::timestamptz[], $20::text[]';
export const CHANGE_FIELDS = 'seq, series, series_attempts, status, attempted, next_attempt_at, delivered_at, last_error';

/**
 * One statement (so one round trip, atomic) for a whole batch: apply the guarded event changes, insert
 * the attempt rows of the changes that applied (PostgreSQL runs a data-modifying WITH part even though
 * nothing reads it), and add what the applied changes did to the delivery rollups behind the admin
 * stats series. An attempt whose step another writer already recorded (a stalled job re-run while its
 * first run still called, a step's job added twice) is not inserted: the event's history holds each
 * attempt number once, as its counters do. Columns travel as arrays, so the statement text is the same
 * for any batch size.
 *
 * Planned once per connection and kept (GenericPlanPool): planned for its values on every call, as
 * PostgreSQL chose, it spent 2.1 ms planning against 1.1 ms running. The kept plan holds every
 * partition; `e.seq BETWEEN $22 AND $23` (the batch's lowest and highest seq, scalars) lets the executor
 * drop the days outside the batch before it reads anything, which an array parameter cannot, and the
 * guard finds rows by primary key alone (atStepSql), whatever the statistics said when it was planned.
 */
export const RECORD_SQL = `
  WITH changed AS (
    UPDATE events e
       SET ${stepChangeSql('e', 'v')}
      FROM unnest(${CHANGE_ARRAYS}) AS v(${CHANGE_FIELDS})
     WHERE e.seq = ANY($13::bigint[]) AND e.seq BETWEEN $22::bigint AND $23::bigint AND e.seq = v.seq AND ${atStepSql('e', 'v')}
    RETURNING v.seq::text AS seq, v.seq AS step_seq, v.series, v.series_attempts, e.account_id, v.status, v.attempted, e.delivered_at, e.created_at
  ),
  inserted AS (
    INSERT INTO delivery_attempts (event_seq, series, attempt, started_at, duration_ms, url, request_headers,
                                   request_body, response_status, response_headers, response_body, error)
    SELECT a.event_seq, a.series, a.attempt, a.started_at, a.duration_ms, a.url, a.request_headers,
           a.request_body, a.response_status, a.response_headers, a.response_body, a.error
      FROM unnest($1::bigint[], $2::int[], $3::int[], $4::timestamptz[], $5::int[], $6::text[], $7::json[],
                  $8::text[], $9::int[], $10::json[], $11::text[], $12::text[], $21::int[])
           AS a(event_seq, series, attempt, started_at, duration_ms, url, request_headers,
                request_body, response_status, response_headers, response_body, error, step_series_attempts)
      JOIN changed c ON c.step_seq = a.event_seq AND c.series = a.series AND c.series_attempts = a.step_series_attempts
  ),${deliveryRollupCte('changed')}
  SELECT seq, series, series_attempts FROM changed`;

/** PostgreSQL text cannot hold NUL; receivers' bodies and headers may contain anything. */
function storable(text: string | null): string | null {
  return text === null ? null : text.replaceAll('\u0000', '');
}

function changeKey(seq: string, series: number, seriesAttempts: number): string {
  return `${seq}/${series}/${seriesAttempts}`;
}

/** RECORD_SQL's $1–$12: the attempts' columns, one array each (also the destinations' record statement's). */
export function attemptColumns(attempts: readonly AttemptRow[]): unknown[] {
  return [
    attempts.map((row) => row.eventSeq),
    attempts.map((row) => row.series),
    attempts.map((row) => row.attempt),
    attempts.map((row) => row.startedAt),
    attempts.map((row) => row.durationMs),
    attempts.map((row) => row.url),
    attempts.map((row) => JSON.stringify(row.requestHeaders)),
    attempts.map((row) => row.requestBody),
    attempts.map((row) => row.responseStatus),
    attempts.map((row) => (row.responseHeaders ? JSON.stringify(row.responseHeaders) : null)),
    attempts.map((row) => storable(row.responseBody)),
    attempts.map((row) => storable(row.error)),
  ];
}

/** RECORD_SQL's $13–$20: the guarded changes' columns, one array each. */
export function changeColumns(changes: readonly EventChange[]): unknown[] {
  return [
    changes.map((change) => change.seq),
    changes.map((change) => change.series),
    changes.map((change) => change.seriesAttempts),
    changes.map((change) => change.status),
    changes.map((change) => change.attempted),
    changes.map((change) => change.nextAttemptAt),
    changes.map((change) => change.deliveredAt),
    changes.map((change) => storable(change.lastError)),
  ];
}

/**
 * Writes the first outcome of each step (two in one batch are duplicate jobs: only the first may change
 * the row and add its attempt) and answers, per outcome, whether it was the one whose change applied.
 * `write` answers the keys of the steps whose change applied.
 */
export async function recordFirstOfEachStep<T>(outcomes: readonly T[], keyOf: (outcome: T) => string, write: (firsts: T[]) => Promise<Set<string>>): Promise<boolean[]> {
  const seen = new Set<string>();
  const firsts = outcomes.filter((outcome) => {
    const key = keyOf(outcome);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  const applied = await write(firsts);
  const claimed = new Set<string>();
  return outcomes.map((outcome) => {
    const key = keyOf(outcome);
    if (!applied.has(key) || claimed.has(key)) return false;
    claimed.add(key);
    return true;
  });
}

/**
 * The worker's record of its outcomes: written in batches shared by all concurrent jobs, so a busy
 * worker makes a few round trips per batch instead of one per event.
 */
@Injectable()
export class OutcomeStore {
  private readonly logger = new Logger(OutcomeStore.name);
  private readonly writer: Batcher<Outcome, boolean>;

  constructor(private readonly keptPlans: GenericPlanPool) {
    // Callers wait for their batch to commit before their job is reported done. One statement at a
    // time: outcomes arriving meanwhile form the next, larger batch, so batches grow with the load
    // and no linger is needed (one would only make a lone outcome, and its job, wait for company).
    // Each statement pays a fixed part (the rollup, the events tally trigger, a commit), and on a
    // small box two in flight per worker, doubled by a second worker, cost PostgreSQL a third more
    // CPU per delivery with no gain in rate (BENCHMARKS.md).
    const writeMany = oneByOneOnFailure((outcomes: Outcome[]) => this.execute(outcomes), {
      onSplit: (error, size) =>
        this.logger.warn(`writing ${size} delivery outcomes at once failed (${loggableErrorText(error)}); writing them one by one`),
    });
    this.writer = new Batcher(writeMany, { maxBatch: 200, maxInFlight: 1, lingerMs: 0 });
  }

  /** Resolves once the outcome is committed: true when the event change applied, false when the row had moved on. */
  record(outcome: Outcome): Promise<boolean> {
    return this.writer.submit(outcome);
  }

  /** Waits for every outcome handed in so far to be written (shutdown). */
  async drain(): Promise<void> {
    await this.writer.drain();
  }

  private execute(outcomes: Outcome[]): Promise<boolean[]> {
    const keyOf = ({ change }: Outcome): string => changeKey(change.seq, change.series, change.seriesAttempts);
    return recordFirstOfEachStep(outcomes, keyOf, async (firsts) => {
      const stepped = firsts.filter((outcome): outcome is Outcome & { attempt: AttemptRow } => outcome.attempt !== null);
      const changes = firsts.map((outcome) => outcome.change);
      const rows = await this.keptPlans.query<{ seq: string; series: number; series_attempts: number }>('delivery-record-outcomes', RECORD_SQL, [
        ...attemptColumns(stepped.map((outcome) => outcome.attempt)),
        ...changeColumns(changes),
        stepped.map((outcome) => outcome.change.seriesAttempts),
        ...seqRange(changes.map((change) => change.seq)),
      ]);
      return new Set(rows.map((row) => changeKey(row.seq, row.series, row.series_attempts)));
    });
  }
}
