import { Injectable, Logger } from '@nestjs/common';
import { atStepSql, deliveryRollupCte, GenericPlanPool, seqRange } from '@app/persistence';
import { Batcher, loggableErrorText, oneByOneOnFailure } from '@app/runtime';
import { type AttemptRow, attemptColumns, CHANGE_ARRAYS, CHANGE_FIELDS, changeColumns, type EventChange, recordFirstOfEachStep, stepChangeSql } from '../outcome/outcome-store';

/** One step's record of a delivery to an extra destination: its attempt (when one was made or skipped) and the row's change. */
export interface DestinationOutcome {
  destinationId: string;
  attempt: AttemptRow | null;
  change: EventChange;
}

/**
 * The primary's RECORD_SQL (outcome-store.ts) against destination_deliveries, for a whole batch in one
 * statement: the guarded changes (applied only while the row is at the job's step and pending), then
 * the attempts of the changes that applied, tagged with their destination (a step another writer already
 * recorded adds no second attempt), and what they did to the delivery rollups behind the stats
 * series, which count every delivery, to any destination. Columns travel as arrays, so one prepared text
 * serves any batch, under one kept plan as the primary's: the batch's lowest and highest seq ($24, $25)
 * prune it to the batch's days.
 */
export const DESTINATION_RECORD_SQL = `
  WITH changed AS (
    UPDATE destination_deliveries d
       SET ${stepChangeSql('d', 'v')}
      FROM unnest(${CHANGE_ARRAYS}, $22::varchar[]) AS v(${CHANGE_FIELDS}, destination_id)
     WHERE d.event_seq = ANY($13::bigint[]) AND d.event_seq BETWEEN $24::bigint AND $25::bigint AND d.event_seq = v.seq AND d.destination_id = v.destination_id AND ${atStepSql('d', 'v')}
    RETURNING v.seq::text AS seq, v.seq AS step_seq, v.destination_id, v.series, v.series_attempts,
              d.account_id, v.status, v.attempted, d.delivered_at, d.created_at
  ),
  inserted AS (
    INSERT INTO delivery_attempts (event_seq, series, attempt, started_at, duration_ms, url, request_headers,
                                   request_body, response_status, response_headers, response_body, error, destination_id)
    SELECT a.event_seq, a.series, a.attempt, a.started_at, a.duration_ms, a.url, a.request_headers,
           a.request_body, a.response_status, a.response_headers, a.response_body, a.error, a.destination_id
      FROM unnest($1::bigint[], $2::int[], $3::int[], $4::timestamptz[], $5::int[], $6::text[], $7::json[],
                  $8::text[], $9::int[], $10::json[], $11::text[], $12::text[], $21::int[], $23::varchar[])
           AS a(event_seq, series, attempt, started_at, duration_ms, url, request_headers,
                request_body, response_status, response_headers, response_body, error, step_series_attempts, destination_id)
      JOIN changed c ON c.step_seq = a.event_seq AND c.destination_id = a.destination_id
                    AND c.series = a.series AND c.series_attempts = a.step_series_attempts
  ),${deliveryRollupCte('changed')}
  SELECT seq, destination_id, series, series_attempts FROM changed`;

function stepKey(seq: string, destinationId: string, series: number, seriesAttempts: number): string {
  return `${seq}/${destinationId}/${series}/${seriesAttempts}`;
}

const keyOf = ({ destinationId, change }: DestinationOutcome): string => stepKey(change.seq, destinationId, change.series, change.seriesAttempts);

/**
 * Destination outcomes written in batches shared by all concurrent jobs, as OutcomeStore writes the
 * primary's: one statement at a time, the outcomes that arrive meanwhile forming the next batch.
 */
@Injectable()
export class DestinationOutcomeStore {
  private readonly logger = new Logger(DestinationOutcomeStore.name);
  private readonly writer: Batcher<DestinationOutcome, boolean>;

  constructor(private readonly keptPlans: GenericPlanPool) {
    const writeMany = oneByOneOnFailure((outcomes: DestinationOutcome[]) => this.execute(outcomes), {
      onSplit: (error, size) =>
        this.logger.warn(`writing ${size} destination delivery outcomes at once failed (${loggableErrorText(error)}); writing them one by one`),
    });
    this.writer = new Batcher(writeMany, { maxBatch: 200, maxInFlight: 1, lingerMs: 0 });
  }

  /** Resolves once committed: true when the change applied, false when the row had moved on. */
  record(outcome: DestinationOutcome): Promise<boolean> {
    return this.writer.submit(outcome);
  }

  private execute(outcomes: DestinationOutcome[]): Promise<boolean[]> {
    return recordFirstOfEachStep(outcomes, keyOf, async (firsts) => {
      const stepped = firsts.filter((outcome): outcome is DestinationOutcome & { attempt: AttemptRow } => outcome.attempt !== null);
      const changes = firsts.map((outcome) => outcome.change);
      const rows = await this.keptPlans.query<{ seq: string; destination_id: string; series: number; series_attempts: number }>('destination-record-outcomes', DESTINATION_RECORD_SQL, [
        ...attemptColumns(stepped.map((outcome) => outcome.attempt)),
        ...changeColumns(changes),
        stepped.map((outcome) => outcome.change.seriesAttempts),
        firsts.map((outcome) => outcome.destinationId),
        stepped.map((outcome) => outcome.destinationId),
        ...seqRange(changes.map((change) => change.seq)),
      ]);
      return new Set(rows.map((row) => stepKey(row.seq, row.destination_id, row.series, row.series_attempts)));
    });
  }
}
