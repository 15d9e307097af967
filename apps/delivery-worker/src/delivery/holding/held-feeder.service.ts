import { Inject, Injectable, Logger } from '@nestjs/common';
import type Redis from 'ioredis';
import { type HoldReason, openDeliveries, Sql } from '@app/persistence';
import { DeliveryQueues, ENVIRONMENT, type Environment, REDIS, RedisKeys, RepeatingRun, stepOfRow } from '@app/runtime';
import { type DestinationSettings, DestinationSettingsCache } from '../destinations/destination-settings.cache';
import { deliveriesReleased } from '../delivery.metrics';
import { SubjectOrder } from '../ordering/subject-order';

/** How often the feeder looks at the held deliveries (and the deadlines of open ones). */
export const FEED_INTERVAL_MS = 1_000;
/** Held deliveries released per destination and look, so one destination's backlog takes its turns with the others'. */
const RELEASE_BATCH = 1_000;
/** Deliveries past their deadline ended per look. */
const EXPIRE_BATCH = 1_000;

/** How many of a destination's held deliveries go back to the queue now, and whether the first goes as its breaker's probe. */
interface Release {
  count: number;
  probe: boolean;
}

/**
 * Held deliveries go back to the queue in the order ingest accepted them when their hold ends
 * (docs/delivery-model.md): a paused destination resumed; a breaker that closed (all of them), or whose
 * cooldown ended (the oldest one, as its probe: CONTRACT §5); and a destination deleted or disabled
 * (they end `failed` in the worker). Re-queuing is bounded by what it
 * feeds (CONTRACT §10): while the account has REQUEUE_MAX_WAITING jobs in the queue, or Redis is fuller
 * than REQUEUE_MAX_REDIS_MEMORY_PERCENT of its maxmemory, nothing more of the account goes. Also ends the
 * held and waiting deliveries whose deadline passed (CONTRACT §13). One worker feeds at a time (a lock
 * in Redis); each look is a handful of statements however many deliveries are held.
 */
@Injectable()
export class HeldFeeder {
  private readonly logger = new Logger(HeldFeeder.name);
  private readonly loop = new RepeatingRun(() => this.feedOnce(), { intervalMs: FEED_INTERVAL_MS, what: 'feeding held deliveries', logger: this.logger });

  constructor(
    private readonly sql: Sql,
    private readonly queues: DeliveryQueues,
    private readonly destinations: DestinationSettingsCache,
    private readonly subjectOrder: SubjectOrder,
    @Inject(REDIS) private readonly redis: Redis,
    private readonly keys: RedisKeys,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
  ) {}

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** One look: returns how many held deliveries went back to the queue and how many expired. */
  async feedOnce(): Promise<{ released: number; expired: number }> {
    const lock = await this.redis.set(this.keys.feederLock(), String(process.pid), 'PX', FEED_INTERVAL_MS * 5, 'NX');
    if (lock === null) return { released: 0, expired: 0 };
    try {
      const ended = await this.sql.rows(openDeliveries.EXPIRE_OPEN_DELIVERIES, { limit: EXPIRE_BATCH });
      // An expired event releases its subject's next one (CONTRACT §13), which waits for it in the delayed set.
      // Together, so the order's neighbour questions go in its batches rather than one round trip each.
      await Promise.all(
        ended.flatMap((row) =>
          row.subject === null ? [] : [this.subjectOrder.release({ seq: row.event_seq, destinationId: row.destination_id, accountId: row.account_id, series: row.series, subject: row.subject })],
        ),
      );
      const expired = ended.length;
      let released = 0;
      for (const held of await this.sql.rows(openDeliveries.HELD_DESTINATIONS, {})) {
        if (this.loop.isStopped) break;
        released += await this.feed(held.held, held.account_id, held.destination_id);
      }
      if (released > 0) deliveriesReleased.inc(released);
      return { released, expired };
    } finally {
      await this.redis.del(this.keys.feederLock());
    }
  }

  private async feed(reason: HoldReason, accountId: number, destinationId: string): Promise<number> {
    const destination = await this.destinations.get(accountId, destinationId);
    const release = await this.releaseOf(reason, destination);
    if (release.count === 0) return 0;
    const room = await this.room(accountId);
    const count = Math.min(release.count, room);
    if (count <= 0) return 0;
    const steps = await this.sql.rows(openDeliveries.RELEASE_HELD, { reason, accountId, destinationId, limit: count });
    const pending = steps.filter((row) => row.pending);
    if (pending.length === 0) return 0;
    await this.queues.addBulk(pending.map((row, index) => (release.probe && index === 0 ? { ...stepOfRow(row), probe: true as const } : stepOfRow(row))));
    return pending.length;
  }

  /** What the hold's end lets go now, by its reason and the destination's state. */
  private async releaseOf(reason: HoldReason, destination: DestinationSettings | null): Promise<Release> {
    const all = { count: RELEASE_BATCH, probe: false };
    // Gone or disabled: every held delivery ends failed in the worker (a paused one is kept until resumed).
    if (!destination || destination.deleted) return all;
    if (reason === 'paused') return destination.paused ? { count: 0, probe: false } : all;
    if (destination.disabledAt) return all;
    if (destination.endpointKey === null) return all;
    const [state, retryAt, probeUntil] = await this.redis.hmget(this.keys.breaker(destination.endpointKey), 'state', 'retry_at', 'probe_until');
    const now = Date.now();
    if (state === 'open') return now >= Number(retryAt ?? 0) ? { count: 1, probe: true } : { count: 0, probe: false };
    if (state === 'half_open') return now >= Number(probeUntil ?? 0) ? { count: 1, probe: true } : { count: 0, probe: false };
    return all;
  }

  /** How many more of the account's deliveries the queue takes now (0 while Redis is too full). */
  private async room(accountId: number): Promise<number> {
    const { requeueMaxWaiting, requeueMaxRedisMemory } = this.environment.delivery;
    const share = await this.queues.memoryShare(accountId);
    if (share !== null && share >= requeueMaxRedisMemory) return 0;
    return requeueMaxWaiting - (await this.queues.accountJobs(accountId));
  }
}
