import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { isPendingSql } from '@app/persistence';
import { DeliveryQueues, ENVIRONMENT, type Environment, loggableErrorText, retryStep, traceCarrier } from '@app/runtime';
import { formatDuration } from '../admission/endpoint-disabling';
import { deliveryAttempts, deliveryEventsSettled, deliveryJobsWithoutCall } from '../delivery.metrics';
import type { PendingEvent } from '../loading/event-loader';
import type { DeliveryResult } from '../outcome/outcome-recorder.service';
import type { AttemptRow, EventChange } from '../outcome/outcome-store';
import { planNextStep, stepGuard } from '../outcome/event-step';
import type { Verdict } from '../outcome/retry-policy';
import type { DestinationRow } from './destination-delivery-loader';

/**
 * One statement: the attempt (when there is one) into delivery_attempts with its destination, and the
 * guarded change of the delivery row (applied only while it is still at the job's step and pending).
 */
const RECORD_SQL = `
  WITH inserted AS (
    INSERT INTO delivery_attempts (event_seq, series, attempt, started_at, duration_ms, url, request_headers,
                                   request_body, response_status, response_headers, response_body, error, destination_id)
    SELECT $1::bigint, $3::int, $11::int, $12::timestamptz, $13::int, $14::text, $15::json, $16::text, $17::int, $18::json, $19::text, $20::text, $2::varchar
     WHERE $10::boolean
  ),
  changed AS (
    UPDATE destination_deliveries d
       SET status = COALESCE($5::varchar, d.status),
           attempts = d.attempts + $6::int,
           series_attempts = d.series_attempts + $6::int,
           next_attempt_at = $7::timestamptz,
           delivered_at = COALESCE($8::timestamptz, d.delivered_at),
           last_error = $9::text,
           updated_at = now()
     WHERE d.event_seq = $1::bigint AND d.destination_id = $2::varchar AND d.series = $3::int AND d.series_attempts = $4::int
       AND ${isPendingSql('d')}
    RETURNING 1
  )
  SELECT count(*)::int AS applied FROM changed`;

const START_FAILING_SQL = `UPDATE destinations SET failing_since = $2 WHERE id = $1 AND failing_since IS NULL AND disabled_at IS NULL`;
const RECOVERED_SQL = `UPDATE destinations SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL`;
const DISABLE_SQL = `
  UPDATE destinations
     SET disabled_at = now(), version = version + 1, updated_at = now(),
         disabled_reason = 'every attempt since ' || to_char(failing_since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || ' failed (ENDPOINT_DISABLE_AFTER ' || $3 || ')'
   WHERE id = $1 AND disabled_at IS NULL AND failing_since IS NOT NULL
     AND failing_since <= now() - make_interval(secs => $2::double precision / 1000)
  RETURNING disabled_at, disabled_reason`;

/** The delivery's last_error when its destination is disabled: what happened and what the operator can do. */
export function disabledDestinationError(destination: Pick<DestinationRow, 'id' | 'disabledAt' | 'disabledReason'>): string {
  const since = destination.disabledAt ? ` since ${destination.disabledAt.toISOString()}` : '';
  return `destination ${destination.id} disabled${since}${destination.disabledReason ? ` (${destination.disabledReason})` : ''}; no call made. Enable it, then redeliver`;
}

/**
 * The record of a destination delivery's step: as OutcomeRecorder for the primary, against the
 * destination_deliveries row, the attempt tagged with the destination, and the destination's own
 * disabling clock (failing_since/disabled_at on its row, read fresh with every load).
 */
@Injectable()
export class DestinationOutcomes {
  private readonly logger = new Logger(DestinationOutcomes.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly queues: DeliveryQueues,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
  ) {}

  /** Ends the delivery without a call (destination deleted or disabled, erased, unencodable, unsignable). */
  async settleWithoutCall(event: PendingEvent, destinationId: string, why: string, reason: string): Promise<DeliveryResult> {
    const change: EventChange = { ...stepGuard(event), status: 'failed', attempted: 0, nextAttemptAt: null, deliveredAt: null, lastError: why };
    if (!(await this.write(destinationId, null, change))) return 'superseded';
    deliveryJobsWithoutCall.inc({ reason });
    deliveryEventsSettled.inc({ status: 'failed' });
    return 'failed';
  }

  /** Paused: the row stays pending with no due time and no job; resume enqueues it again. */
  async park(event: PendingEvent, destinationId: string): Promise<DeliveryResult> {
    const change: EventChange = { ...stepGuard(event), status: null, attempted: 0, nextAttemptAt: null, deliveredAt: null, lastError: 'paused' };
    if (!(await this.write(destinationId, null, change))) return 'superseded';
    deliveryJobsWithoutCall.inc({ reason: 'paused' });
    return 'paused';
  }

  /** Records the attempt (made, or skipped by the open breaker) and the delivery's next state, then enqueues the retry. */
  async recordAttempt(event: PendingEvent, destination: DestinationRow, attempt: AttemptRow, verdict: Verdict, countsForHealth: boolean): Promise<DeliveryResult> {
    deliveryAttempts.inc({ outcome: verdict.success ? 'delivered' : (verdict.failureClass ?? 'failed') });
    const { change, retryInMs } = planNextStep(event, verdict, this.environment.delivery.retryScheduleMs);
    if (countsForHealth) await this.noteOutcome(destination, verdict.success, attempt.startedAt);
    if (!(await this.write(destination.id, attempt, change))) return 'superseded';
    if (change.status === 'delivered' || change.status === 'failed') {
      deliveryEventsSettled.inc({ status: change.status });
      return change.status;
    }
    const retry = retryStep({ eventSeq: event.seq, accountId: event.accountId, series: event.series, attempt: event.seriesAttempts, destinationId: destination.id });
    await this.queues.addBulk([{ ...retry, ...traceCarrier() }], retryInMs ?? 0);
    return 'retrying';
  }

  /** Before an attempt: the destination as it stands when it is (or is now found to be) disabled, else null. */
  async disabled(destination: DestinationRow): Promise<DestinationRow | null> {
    if (destination.disabledAt) return destination;
    const { endpointDisableAfterMs } = this.environment.delivery;
    if (destination.failingSince === null || Date.now() - destination.failingSince.getTime() < endpointDisableAfterMs) return null;
    const [row] = await this.dataSource.query<{ disabled_at: Date; disabled_reason: string }[]>(DISABLE_SQL, [
      destination.id,
      endpointDisableAfterMs,
      formatDuration(endpointDisableAfterMs),
    ]);
    if (!row) return null;
    this.logger.warn(`destination ${destination.id} of account ${destination.accountId} disabled: ${row.disabled_reason}`);
    return { ...destination, disabledAt: row.disabled_at, disabledReason: row.disabled_reason };
  }

  /** Starts or stops the destination's failure clock on a transition; never throws (the next attempt catches up). */
  private async noteOutcome(destination: DestinationRow, success: boolean, at: Date): Promise<void> {
    if (success === (destination.failingSince === null)) return;
    try {
      if (success) await this.dataSource.query(RECOVERED_SQL, [destination.id]);
      else await this.dataSource.query(START_FAILING_SQL, [destination.id, at]);
    } catch (error) {
      this.logger.warn(`could not record the health of destination ${destination.id}: ${loggableErrorText(error)}`);
    }
  }

  private async write(destinationId: string, attempt: AttemptRow | null, change: EventChange): Promise<boolean> {
    const [row] = await this.dataSource.query<{ applied: number }[]>(RECORD_SQL, [
      change.seq,
      destinationId,
      change.series,
      change.seriesAttempts,
      change.status,
      change.attempted,
      change.nextAttemptAt,
      change.deliveredAt,
      storable(change.lastError),
      attempt !== null,
      attempt?.attempt ?? 0,
      attempt?.startedAt ?? null,
      attempt?.durationMs ?? 0,
      attempt?.url ?? '',
      JSON.stringify(attempt?.requestHeaders ?? {}),
      attempt?.requestBody ?? '',
      attempt?.responseStatus ?? null,
      attempt?.responseHeaders ? JSON.stringify(attempt.responseHeaders) : null,
      storable(attempt?.responseBody ?? null),
      storable(attempt?.error ?? null),
    ]);
    return (row?.applied ?? 0) > 0;
  }
}

/** PostgreSQL text cannot hold NUL; receivers' bodies may contain anything. */
function storable(text: string | null): string | null {
  return text === null ? null : text.replaceAll('\u0000', '');
}
