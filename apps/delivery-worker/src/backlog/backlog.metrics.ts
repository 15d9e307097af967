import { Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { DeliveryQueues, gauge, queueDepth, within } from '@app/runtime';

/** The names the autoscaler (deploy/kubernetes/base/monitoring.yaml) and the alerts read. */
export const BACKLOG_EVENTS_METRIC = 'callback_backlog_events';
export const BACKLOG_OLDEST_DUE_METRIC = 'callback_backlog_oldest_due_seconds';

/** Above this many due deliveries the count reads as this number: more than any autoscaler bound asks for (maxReplicaCount × 2,000 per replica). */
export const BACKLOG_COUNT_CAP = 100_000;

/** Scrapes within this window (several Prometheus replicas, KEDA) share one reading. */
const READING_TTL_MS = 5000;
const READ_TIMEOUT_MS = 3000;

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
 * Deployment-wide gauges for the autoscaler and the alerts: the deliveries due and not yet taken (the
 * queue's waiting jobs, over every shard) and how long the oldest of them has been due. Every worker
 * reports the same numbers, so aggregate them with max(), not sum(). Held deliveries (a pause, an open
 * breaker) are not work a worker can do, so they are not backlog; jobs Redis lost are re-added by the
 * reconciler within its grace period and count from then.
 */
@Injectable()
export class BacklogMetrics implements OnModuleInit, OnApplicationShutdown {
  private readonly read: () => Promise<Backlog>;

  constructor(queues: DeliveryQueues) {
    this.read = async () => {
      const depth = await queueDepth(queues.all());
      return { events: Math.min(BACKLOG_COUNT_CAP, depth.waiting), oldestDueSeconds: depth.oldest_waiting_age_seconds ?? 0 };
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
