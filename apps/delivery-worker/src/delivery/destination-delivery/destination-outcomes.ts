import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { DeliveryQueues, ENVIRONMENT, type Environment, loggableErrorText, retryStep, traceCarrier } from '@app/runtime';
import { formatDuration } from '../admission/endpoint-disabling';
import { deliveryAttempts, deliveryEventsSettled, deliveryJobsWithoutCall } from '../delivery.metrics';
import type { PendingEvent } from '../loading/event-loader';
import type { DeliveryResult } from '../outcome/outcome-recorder.service';
import type { AttemptRow, EventChange } from '../outcome/outcome-store';
import { planNextStep, stepGuard } from '../outcome/event-step';
import type { Verdict } from '../outcome/retry-policy';
import type { DestinationRow } from './destination-delivery-loader';
import { DestinationOutcomeStore } from './destination-outcome-store';

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
    private readonly store: DestinationOutcomeStore,
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
    // An UPDATE answers [rows, count] through TypeORM.
    const [[row]] = await this.dataSource.query<[{ disabled_at: Date; disabled_reason: string }[], number]>(DISABLE_SQL, [
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

  private write(destinationId: string, attempt: AttemptRow | null, change: EventChange): Promise<boolean> {
    return this.store.record({ destinationId, attempt, change });
  }
}
