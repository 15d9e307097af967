import type { DestinationAuthType, DestinationFilter, DestinationFormat, DestinationType, DestinationView } from '@app/payloads';
import { formatDurationMs } from '@app/runtime';
import { retryView } from './destination-retry.validation';

/* Rows of `destinations` as read here (the primary's too: its target is the push URL as set), and the view every door answers (CONTRACT §11). */

export interface DestinationRow {
  id: string;
  account_id: number;
  type: DestinationType;
  target: string | null;
  target_shown: string | null;
  actions: string[] | null;
  filter: DestinationFilter | null;
  content_type: string;
  format: DestinationFormat;
  auth_type: DestinationAuthType | null;
  ordering: string;
  max_per_second: number | null;
  paused: boolean;
  disabled_at: Date | null;
  retry_schedule_ms: number[] | null;
  stop_on: number[];
  disable_on: number[];
  expire_after_ms: string | null;
}

/** Every column but the sealed credentials (target, auth, signing_secret are read only where needed). */
export const VIEW_COLUMNS = `id, account_id, type, target_shown, actions, filter, content_type, format, auth_type, ordering,
  max_per_second, paused, disabled_at, retry_schedule_ms, stop_on, disable_on, expire_after_ms::text AS expire_after_ms`;

/** What a view adds to the row: the breaker as Redis keeps it, the held deliveries, and the deployment's default schedule. */
export interface ViewExtras {
  breaker: string;
  held: number;
  defaultScheduleMs: readonly number[];
}

export function destinationViewOf(row: Omit<DestinationRow, 'target'>, { breaker, held, defaultScheduleMs }: ViewExtras): DestinationView {
  return {
    id: row.id,
    type: row.type,
    target: row.target_shown,
    actions: row.actions,
    filter: row.filter,
    content_type: row.content_type,
    format: row.format,
    auth: row.auth_type ? { type: row.auth_type } : null,
    ordering: row.ordering,
    max_per_second: row.max_per_second,
    paused: row.paused,
    retry: retryView({ scheduleMs: row.retry_schedule_ms, stopOn: row.stop_on, disableOn: row.disable_on }, defaultScheduleMs),
    expire_after: row.expire_after_ms === null ? null : formatDurationMs(Number(row.expire_after_ms)),
    state: { breaker, disabled_at: row.disabled_at?.toISOString() ?? null, held },
  };
}

