import { defineStatement } from '../statements/statement';
import type { DestinationFormat, DestinationType } from '../entities/destination.entity';

/** A destination as delivering to it reads it: credentials still sealed. */
export interface DestinationRow {
  account_id: number;
  id: string;
  type: DestinationType;
  target: string | null;
  target_shown: string | null;
  auth: string | null;
  /** Null only on a deleted destination. */
  signing_secret: string | null;
  previous_signing_secret: string | null;
  previous_secret_expires_at: Date | null;
  content_type: string;
  format: DestinationFormat;
  ordering: 'none' | 'subject';
  max_per_second: number | null;
  paused: boolean;
  failing_since: Date | null;
  disabled_at: Date | null;
  disabled_reason: string | null;
  deleted_at: Date | null;
  retry_schedule_ms: number[] | null;
  stop_on: number[];
  disable_on: number[];
  expire_after_ms: string | null;
  version: number;
}

/** Every destination of these accounts, the primary and deleted ones included (a deleted one ends its deliveries). */
export const LOAD_ACCOUNT_DESTINATIONS = defineStatement<{ accountIds: number[] }, DestinationRow>(
  'load-account-destinations',
  'prepared',
  (p) => `
  SELECT account_id, id, type, target, target_shown, auth, signing_secret, previous_signing_secret, previous_secret_expires_at,
         content_type, format, ordering, max_per_second, paused, failing_since, disabled_at, disabled_reason, deleted_at,
         retry_schedule_ms, stop_on, disable_on, expire_after_ms::text AS expire_after_ms, version
    FROM destinations WHERE account_id = ANY(${p.accountIds}::int[])`,
);

interface DestinationKey {
  accountId: number;
  destinationId: string;
}

/** Starts a destination's failure clock (ENDPOINT_DISABLE_AFTER): only while none runs and it is enabled. */
export const START_FAILING = defineStatement<DestinationKey & { at: Date }>(
  'destination-start-failing',
  'prepared',
  (p) => `
  UPDATE destinations SET failing_since = ${p.at}
   WHERE account_id = ${p.accountId} AND id = ${p.destinationId} AND failing_since IS NULL AND disabled_at IS NULL`,
);

/** Stops it after a success. */
export const STOP_FAILING = defineStatement<DestinationKey>(
  'destination-stop-failing',
  'prepared',
  (p) => `UPDATE destinations SET failing_since = NULL WHERE account_id = ${p.accountId} AND id = ${p.destinationId} AND failing_since IS NOT NULL`,
);

export interface DestinationHealthRow {
  failing_since: Date | null;
  disabled_at: Date | null;
  disabled_reason: string | null;
  /** This statement disabled it (another worker may have already). */
  disabled_now: boolean;
}

/**
 * Disables a destination whose failure clock has run for `afterMs`, only when the database agrees (a
 * success in another worker clears the clock before this worker's cache hears of it), and answers the
 * row as it is either way.
 */
export const DISABLE_AFTER_FAILING = defineStatement<DestinationKey & { afterMs: number; afterText: string }, DestinationHealthRow>(
  'destination-disable-after-failing',
  'prepared',
  (p) => `
  WITH disabled AS (
    UPDATE destinations
       SET disabled_at = now(), version = version + 1, updated_at = now(),
           disabled_reason = 'every attempt since ' || to_char(failing_since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
                             || ' failed (ENDPOINT_DISABLE_AFTER ' || ${p.afterText}::text || ')'
     WHERE account_id = ${p.accountId} AND id = ${p.destinationId} AND disabled_at IS NULL AND failing_since IS NOT NULL
       AND failing_since <= now() - make_interval(secs => ${p.afterMs}::double precision / 1000)
    RETURNING failing_since, disabled_at, disabled_reason
  )
  SELECT failing_since, disabled_at, disabled_reason, true AS disabled_now FROM disabled
  UNION ALL
  SELECT failing_since, disabled_at, disabled_reason, false FROM destinations
   WHERE account_id = ${p.accountId} AND id = ${p.destinationId} AND NOT EXISTS (SELECT 1 FROM disabled)`,
);

/** Disables a destination at once (its retry policy's `disable_on`, CONTRACT §13); answers nothing when it already was. */
export const DISABLE_NOW = defineStatement<DestinationKey & { reason: string }, { disabled_at: Date; disabled_reason: string }>(
  'destination-disable-now',
  'prepared',
  (p) => `
  UPDATE destinations SET disabled_at = now(), disabled_reason = ${p.reason}, version = version + 1, updated_at = now()
   WHERE account_id = ${p.accountId} AND id = ${p.destinationId} AND disabled_at IS NULL
  RETURNING disabled_at, disabled_reason`,
);
