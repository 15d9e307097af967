import type { RedisClient } from '../redis/redis-connection';
import type { RedisKeys } from '../redis/redis-keys';
import { RedisScript } from '../redis/redis-script';
import { setBounded } from '../collections/bounded-map';
import { MAX_JOB_PRIORITY } from './delivery-queue';

/**
 * An account's first FIFO_RANKS queued jobs go to the plain FIFO list, which BullMQ serves before its
 * prioritized set: an account without a backlog is served in arrival order, as before.
 */
export const FIFO_RANKS = 50;

/** A counter nobody touched for this long is dropped, so any drift (a lost decrement) heals once the account is idle. */
const BACKLOG_KEEP_MS = 10 * 60_000;

/** Decrements are summed per account and written this often (one command per account and tick, not per job). */
const SETTLE_FLUSH_MS = 100;

/**
 * INCRBY and its expiry in one command on the wire (was MULTI, INCRBY, PEXPIRE, EXEC: four commands,
 * one round trip): answers the account's backlog after the new jobs.
 */
const ENQUEUE = new RedisScript(`
local last = redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return last`);

/** DECRBY that never goes below zero (a decrement for a job counted before Redis was emptied). */
const SETTLE = new RedisScript(`
local left = redis.call('DECRBY', KEYS[1], ARGV[1])
if left < 0 then redis.call('SET', KEYS[1], 0, 'PX', ARGV[2]) return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return left`);

/**
 * A producer that saw an account's backlog small this recently adds its next jobs to the FIFO list
 * without waiting for the counter's answer (see `guess`).
 */
const GUESS_TRUST_MS = 1_000;
/** ...when the backlog it saw, plus the jobs it has guessed since, stays within half the FIFO ranks. */
const GUESS_WITHIN = FIFO_RANKS / 2;
/** Accounts whose last answered rank a producer remembers (the oldest is forgotten first). */
const REMEMBERED_ACCOUNTS = 10_000;

/** Job priority of the job with this rank in its account's backlog (0: the plain FIFO list). */
export function priorityOfRank(rank: number): number {
  return rank <= FIFO_RANKS ? 0 : Math.min(MAX_JOB_PRIORITY, rank);
}

/**
 * Fair turns between accounts on BullMQ's open-source edition (which has no groups): a counter per
 * account of its jobs in the queue gives each new job its rank in the account's backlog, and a job
 * ranked beyond FIFO_RANKS waits in the prioritized set with priority = rank. The k-th waiting job of
 * every account is taken before the (k+1)-th of any: 20,000 events of one account take ranks 1…20,000
 * and a quiet account's next event takes rank 1, so it goes ahead of all but the first of the backlog.
 * The counter is only a scheduling hint: drift (a worker killed before its decrement, a re-added job
 * that already existed) makes an account's later jobs wait a little longer, never loses one, and
 * heals when the counter expires.
 */
export class AccountBacklog {
  private readonly pending = new Map<number, number>();
  /** The account's rank as this producer last knew it (answered, plus its own guesses since) and when it was answered. */
  private readonly seen = new Map<number, { rank: number; at: number }>();
  private flushTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly connection: RedisClient,
    private readonly keys: RedisKeys,
  ) {}

  /** Counts `count` new jobs of the account; answers their priorities, in order. */
  async enqueue(accountId: number, count: number): Promise<number[]> {
    const last = Number((await ENQUEUE.run(this.connection, [this.keys.accountBacklog(accountId)], [count, BACKLOG_KEEP_MS])) ?? count);
    this.remember(accountId, last);
    return Array.from({ length: count }, (_, index) => priorityOfRank(last - count + 1 + index));
  }

  /**
   * FIFO priorities (all 0) for `count` new jobs of an account whose backlog this producer saw small
   * within GUESS_TRUST_MS, so the jobs can be added without waiting for the counter (which must still be
   * told, `enqueue`, sent first on the same connection): a lone event's enqueue is one round trip
   * instead of two. Null when the rank must be asked. The guess only errs towards a few more FIFO jobs
   * for an account whose backlog another producer grew meanwhile: those sent before the counter's next
   * answer, which every add gets, guessed or not (at most GUESS_WITHIN per producer); jobs that leave
   * only make the real rank smaller than the one seen.
   */
  guess(accountId: number, count: number, now: number): number[] | null {
    const seen = this.seen.get(accountId);
    if (!seen || now - seen.at > GUESS_TRUST_MS || seen.rank + count > GUESS_WITHIN) return null;
    seen.rank += count;
    return new Array<number>(count).fill(0);
  }

  private remember(accountId: number, rank: number): void {
    this.seen.delete(accountId);
    setBounded(this.seen, accountId, { rank, at: Date.now() }, REMEMBERED_ACCOUNTS);
  }

  /** A job of the account left the queue (done, stale or failed; not when it was only postponed). */
  settled(accountId: number): void {
    this.pending.set(accountId, (this.pending.get(accountId) ?? 0) + 1);
    if (!this.flushTimer) {
      this.flushTimer = setTimeout(() => void this.flush(), SETTLE_FLUSH_MS);
      this.flushTimer.unref();
    }
  }

  /** Writes the summed decrements; never throws (a lost one is drift, see the class). */
  async flush(): Promise<void> {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    const batch = [...this.pending];
    this.pending.clear();
    await Promise.all(
      batch.map(([accountId, count]) =>
        SETTLE.run(this.connection, [this.keys.accountBacklog(accountId)], [count, BACKLOG_KEEP_MS]).catch(() => undefined),
      ),
    );
  }
}
