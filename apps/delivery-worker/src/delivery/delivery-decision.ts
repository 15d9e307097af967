import { DESTINATION_DELETED_ERROR } from '@app/persistence';
import type { DeliveryBody } from '@app/payloads';
import { formatDurationMs } from '@app/runtime';
import type { Lease } from './admission';
import type { DestinationSettings } from './destinations/destination-settings.cache';
import type { PendingDelivery } from './loading/delivery-loader';
import type { WithoutCall } from './outcome/delivery-step';

/**
 * What one step does with its delivery: end or hold it without a call, move its job to later without
 * spending an attempt, or call its destination with this body under this admission lease.
 */
export type Decision = WithoutCall | { kind: 'postpone'; ms: number; reason: string } | { kind: 'call'; destination: DestinationSettings; body: DeliveryBody; lease: Lease };

export const ERASED: WithoutCall = { kind: 'end', status: 'failed', why: 'erased', reason: 'erased' };
export const DESTINATION_DELETED: WithoutCall = { kind: 'end', status: 'failed', why: DESTINATION_DELETED_ERROR, reason: 'destination_deleted' };

/** The last_error of a delivery whose deadline passed (CONTRACT §13). */
function expiredError(destination: DestinationSettings): string {
  return destination.expireAfterMs ? `expired after ${formatDurationMs(destination.expireAfterMs)}` : 'expired after its deadline';
}

/**
 * What the loaded rows alone decide, before anything is asked of Redis: a deleted destination, an erased
 * event, a passed deadline, a paused or unopenable destination, no push URL. Null: the step goes on.
 */
export function standingDecision(delivery: PendingDelivery, destination: DestinationSettings, now: number): WithoutCall | null {
  if (destination.deleted) return DESTINATION_DELETED;
  if (delivery.erased) return ERASED;
  if (delivery.expiresAt && delivery.expiresAt.getTime() <= now) return { kind: 'end', status: 'expired', why: expiredError(destination), reason: 'expired' };
  if (destination.paused) return { kind: 'hold', hold: 'paused', why: 'paused' };
  if (destination.unopenable) return { kind: 'end', status: 'failed', why: destination.unopenable, reason: 'unsignable' };
  if (destination.url === null) return { kind: 'end', status: 'no_endpoint', why: 'no push_url is set', reason: 'no_endpoint' };
  return null;
}
