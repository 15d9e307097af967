import { Inject, Injectable } from '@nestjs/common';
import { GenericPlanPool, partitions } from '@app/persistence';
import { Batcher, ENVIRONMENT, type Environment, erasureStamped, REDIS, type RedisClient } from '@app/runtime';
import type { PendingDelivery } from './loading/delivery-loader';
import { ErasureStampView } from './erasure-stamp-view';

/** Thrown just before a call whose event was erased meanwhile: the call is not made (CONTRACT §12). */
export class ErasedEventError extends Error {
  constructor(readonly eventSeq: string) {
    super('erased');
    this.name = 'ErasedEventError';
  }
}

/**
 * Seqs among `seqs` whose event is erased: one probe of the primary key per seq, under one kept plan
 * that drops the days outside the batch's lowest and highest seq ($2, $3) at start (as LOAD_SQL).
 */
export const ERASED_SQL = `SELECT seq::text AS seq FROM events WHERE seq = ANY($1::bigint[]) AND seq BETWEEN $2::bigint AND $3::bigint AND erased`;

/**
 * The last look at an event before its call. A job may have loaded its event before an erasure
 * cleared it (and then waited for a lease, a pace or its subject's turn): unless the erasure stamp says
 * no erasure can have committed since the load (ErasureStampView, one Redis reading shared by every
 * call for ERASURE_TRUST_MS), the row is read again right before the request goes out, batched with
 * every other call about to start, so a pending delivery of an erased event is never sent even when a
 * worker already holds its job. An event erased before its load (a manual redelivery of it) is known
 * from the load itself.
 */
@Injectable()
export class ErasureCheck {
  private readonly reads: Batcher<string, boolean>;
  private readonly stamp: ErasureStampView;

  constructor(keptPlans: GenericPlanPool, @Inject(REDIS) redis: RedisClient, @Inject(ENVIRONMENT) environment: Environment) {
    this.reads = new Batcher(
      async (seqs) => {
        const unique = [...new Set(seqs)];
        const rows = await keptPlans.query<{ seq: string }>('delivery-erased-events', ERASED_SQL, [unique, ...partitions.seqRange(unique)]);
        const erased = new Set(rows.map((row) => row.seq));
        return seqs.map((seq) => ({ ok: true, value: erased.has(seq) }));
      },
      { maxBatch: 500, maxInFlight: 2, lingerMs: 0 },
    );
    this.stamp = new ErasureStampView(() => erasureStamped(redis, environment.redis.prefix));
  }

  /**
   * Resolves when the event may be called; throws ErasedEventError when it was erased. `loadStartedAt`:
   * performance.now() before the event's load was asked for.
   */
  async beforeCall(event: Pick<PendingDelivery, 'seq' | 'erased'>, loadStartedAt: number): Promise<void> {
    if (event.erased) throw new ErasedEventError(event.seq);
    if (await this.stamp.quietSince(loadStartedAt)) return;
    if (await this.reads.submit(event.seq)) throw new ErasedEventError(event.seq);
  }
}
