import { Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { isDueSql, isUndatedSql } from '@app/persistence';
import { gauge, within } from '@app/runtime';

/** The names the autoscaler (deploy/kubernetes/base/monitoring.yaml) and the alerts read. */
export const BACKLOG_EVENTS_METRIC = 'callback_backlog_events';
export const BACKLOG_OLDEST_DUE_METRIC = 'callback_backlog_oldest_due_seconds';

/**
 * Above this many due events the count stops (and reads as this number): more than any autoscaler
 * bound asks for (maxReplicaCount × 2,000 per replica), and it keeps a scrape over a huge backlog to one
 * bounded index range: measured 21–35 ms at the cap against 80–430 ms for counting 313,000 due events
 * in a 2.3-million-row table (docs/kubernetes.md).
 */
export const BACKLOG_COUNT_CAP = 100_000;

/** Scrapes within this window (several Prometheus replicas, KEDA) share one reading. */
const READING_TTL_MS = 5000;
const READ_TIMEOUT_MS = 3000;

/**
 * Due means next_attempt_at has passed: events waiting for a later retry are not backlog, so a receiver
 * that is down for a day does not look like workers falling behind. Both ranges walk
 * events_pending_due_idx (the partial index on pending rows) and stop at the first row not yet due;
 * rows without a due time (written by something other than the service) count as due now, except a
 * paused primary's, which wait for their resume. Deliveries to extra destinations (CONTRACT §11) are
 * jobs on the same queues, so their due ones count too (paused ones have no due time).
 */
const BACKLOG_SQL = `
  SELECT (SELECT count(*) FROM (
            SELECT 1 FROM events WHERE ${isDueSql()} LIMIT ${BACKLOG_COUNT_CAP}
          ) due)
       + (SELECT count(*) FROM (
            SELECT 1 FROM events WHERE ${isUndatedSql()}
               AND NOT EXISTS (SELECT 1 FROM callback_settings s WHERE s.account_id = events.account_id AND s.paused)
             LIMIT ${BACKLOG_COUNT_CAP}
          ) undated)
       + (SELECT count(*) FROM (
            SELECT 1 FROM destination_deliveries WHERE ${isDueSql()} LIMIT ${BACKLOG_COUNT_CAP}
          ) destinations_due) AS events,
         coalesce(extract(epoch FROM now() - least(
           (SELECT min(next_attempt_at) FROM events WHERE ${isDueSql()}),
           (SELECT min(next_attempt_at) FROM destination_deliveries WHERE ${isDueSql()})
         )), 0)::float8 AS oldest_due_seconds`;

export interface Backlog {
  events: number;
  oldestDueSeconds: number;
}

let source: (() => Promise<Backlog>) | null = null;
let reading: { at: number; backlog: Promise<Backlog | null> } | null = null;

/** One query per TTL, and never two at once: a slow reading is shared by the scrapes that wait on it. */
function currentBacklog(): Promise<Backlog | null> {
  const now = Date.now();
  if (!reading || now - reading.at > READING_TTL_MS) {
    const read = source;
    // PostgreSQL away or slow: the gauges keep their last values rather than failing the whole scrape.
    reading = { at: now, backlog: read ? within(read(), READ_TIMEOUT_MS, 'PostgreSQL').catch(() => null) : Promise.resolve(null) };
  }
  return reading.backlog;
}

gauge(BACKLOG_EVENTS_METRIC, 'Events due for delivery now or earlier and not settled (deployment-wide, read from PostgreSQL)', [], async function collect() {
  const backlog = await currentBacklog();
  if (backlog) this.set(backlog.events);
});
gauge(
  BACKLOG_OLDEST_DUE_METRIC,
  'How long the oldest due, unsettled event has been past its due time (0 when none; deployment-wide)',
  [],
  async function collect() {
    const backlog = await currentBacklog();
    if (backlog) this.set(backlog.oldestDueSeconds);
  },
);

/**
 * Deployment-wide gauges for the autoscaler and the alerts, from PostgreSQL (the truth, whatever Redis
 * holds): every worker reports the same numbers, so aggregate them with max(), not sum().
 */
@Injectable()
export class BacklogMetrics implements OnModuleInit, OnApplicationShutdown {
  private readonly read: () => Promise<Backlog>;

  constructor(@InjectDataSource() dataSource: DataSource) {
    this.read = async () => {
      const [row] = await dataSource.query<{ events: string; oldest_due_seconds: number }[]>(BACKLOG_SQL);
      return { events: Number(row?.events ?? 0), oldestDueSeconds: Math.max(0, row?.oldest_due_seconds ?? 0) };
    };
  }

  onModuleInit(): void {
    source = this.read;
    reading = null;
  }

  onApplicationShutdown(): void {
    if (source === this.read) source = null;
  }
}
