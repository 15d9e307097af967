import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type Redis from 'ioredis';
import { Gauge, register } from 'prom-client';
import { DataSource } from 'typeorm';
import { countOpenEndpoints, type DeliveryJobData, DeliveryQueues, queueDepth, REDIS, RedisKeys, within } from '@app/runtime';

/** A scrape must not hang on a database or Redis that is away: the gauge keeps its last value then. */
const READ_TIMEOUT_MS = 1000;

interface LaneReading {
  lanes: number;
  events: number;
  oldestSeconds: number;
}

interface Source {
  disabled(): Promise<number>;
  open(): Promise<number>;
  lanes(): Promise<LaneReading>;
}

/** Waiting jobs looked at per shard to count the lanes they belong to: the count is exact up to this many per shard. */
const LANE_SAMPLE = 1_000;

/**
 * Due work not yet called, from the queue: a lane is an account whose deliveries wait for a worker (its
 * fair turn, AccountBacklog), counted over the first LANE_SAMPLE waiting jobs of each shard.
 */
async function readLanes(queues: DeliveryQueues): Promise<LaneReading> {
  const [depth, ...samples] = await Promise.all([
    queueDepth(queues.all()),
    ...queues.all().map((queue) => queue.getJobs(['wait', 'prioritized'], 0, LANE_SAMPLE - 1, true)),
  ]);
  const accounts = new Set(samples.flat().map((job) => (job.data as DeliveryJobData).accountId));
  return { lanes: accounts.size, events: depth.waiting, oldestSeconds: depth.oldest_waiting_age_seconds ?? 0 };
}

/** The app currently serving the gauges (tests start several worker apps in one process, one after another). */
let current: Source | null = null;

function gauge(name: string, help: string, read: (source: Source) => Promise<number>): Gauge {
  const existing = register.getSingleMetric(name) as Gauge | undefined;
  if (existing) return existing;
  return new Gauge({
    name,
    help,
    async collect() {
      if (!current) return;
      try {
        this.set(await read(current));
      } catch {
        // keep the last value
      }
    },
  });
}

/**
 * Deployment-wide gauges, read when /metrics is scraped: every worker reports the same numbers, so
 * aggregate them with max(), not sum(). Disabled endpoints come from a partial index; open breakers
 * from the size of the open-endpoint index in Redis.
 */
gauge('callbacks_endpoints_disabled', 'Callback endpoints disabled after failing for ENDPOINT_DISABLE_AFTER (deployment-wide)', (source) =>
  source.disabled(),
);
gauge('callbacks_endpoints_breaker_open', 'Callback endpoints whose circuit breaker is open or half open (deployment-wide)', (source) =>
  source.open(),
);

/** The three lane gauges share one reading per scrape (prom-client collects them concurrently). */
let laneReading: { at: number; value: Promise<LaneReading> } | null = null;

function lanesOf(source: Source): Promise<LaneReading> {
  const now = Date.now();
  if (!laneReading || now - laneReading.at > 1000) laneReading = { at: now, value: source.lanes() };
  return laneReading.value;
}

gauge('callback_lanes_waiting', 'Accounts (lanes) whose deliveries wait for a worker (deployment-wide)', async (source) => (await lanesOf(source)).lanes);
gauge('callback_lane_events_waiting', 'Due deliveries not yet taken by a worker, over every lane (deployment-wide)', async (source) => (await lanesOf(source)).events);
gauge(
  'callback_lane_oldest_wait_seconds',
  'Age of the oldest due delivery not yet taken; 0 when none (deployment-wide)',
  async (source) => (await lanesOf(source)).oldestSeconds,
);

@Injectable()
export class EndpointGauges implements OnModuleInit, OnApplicationShutdown {
  private readonly source: Source;

  constructor(
    @InjectDataSource() dataSource: DataSource,
    @Inject(REDIS) redis: Redis,
    keys: RedisKeys,
    queues: DeliveryQueues,
  ) {
    this.source = {
      disabled: async () => {
        const [row] = await within(
          dataSource.query<{ count: number }[]>(`SELECT count(*)::int AS count FROM destinations WHERE disabled_at IS NOT NULL AND deleted_at IS NULL`),
          READ_TIMEOUT_MS,
          'PostgreSQL',
        );
        return row?.count ?? 0;
      },
      open: () => within(countOpenEndpoints(redis, keys), READ_TIMEOUT_MS, 'Redis'),
      lanes: () => within(readLanes(queues), READ_TIMEOUT_MS, 'Redis'),
    };
  }

  onModuleInit(): void {
    current = this.source;
  }

  onApplicationShutdown(): void {
    if (current === this.source) current = null;
  }
}
