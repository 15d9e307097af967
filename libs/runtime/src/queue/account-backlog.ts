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

/**
 * What a process changed without waiting for an answer (jobs added on a guess, jobs that left) is summed
 * per account and written this often: one round trip a tick for every account, not one per job.
 */
const COUNT_FLUSH_MS = 100;

/**
 * The counter's one command: adds a change (new jobs, minus jobs that left) and renews the expiry;
 * answers the backlog after it, i.e. the last new job's rank. INCRBY and its expiry in one command on the
 * wire (was MULTI, INCRBY, PEXPIRE, EXEC). The counter is a plain sum, never clipped: a process writes
 * its changes every COUNT_FLUSH_MS, so a job's end may reach the counter before its add did (it goes
 * below zero for a moment), and a floor there would keep the add and lose the end, growing the counter
 * by one each time. After Redis was emptied, the ends of jobs counted before make it low by at most the
 * jobs then in flight (a few more FIFO jobs for that account) until it expires.
 */
const COUNT = new RedisScript(`
local last = redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return last`);

/**
 * A producer that saw an account's backlog small this recently adds its next jobs to the FIFO list
 * without asking the counter (see `guess`).
 */
const GUESS_TRUST_MS = 1_000;
/** ...when the backlog it saw, plus the jobs it has guessed since, stays within half the FIFO ranks. */
const GUESS_WITHIN = FIFO_RANKS / 2;
/**
 * What an AccountBacklog's timing is measured with: by default the wall clock and COUNT_FLUSH_MS; tests
 * hold the clock still (so "a moment ago" does not depend on the machine's speed) or stretch the write
 * interval (so they decide when the summed changes are written: `flush`, or closing the queues).
 */
export interface BacklogTiming {
  clock?: () => number;
  countFlushMs?: number;
}

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
 * The counter is only a scheduling hint: drift (a process killed before it wrote its summed changes, a
 * re-added job that already existed) makes an account's later jobs wait a little longer, never loses
 * one, and heals when the counter expires.
 */
export class AccountBacklog {
  /** Changes to each account's counter not written yet: jobs added on a guess (+), jobs that left (−). */
  private readonly unwritten = new Map<number, number>();
  /** The account's rank as this producer last knew it (answered, plus its own guesses since) and when it was answered. */
  private readonly seen = new Map<number, { rank: number; at: number }>();
  private flushTimer: NodeJS.Timeout | null = null;

  private readonly clock: () => number;
  private readonly countFlushMs: number;

  constructor(
    private readonly connection: RedisClient,
    private readonly keys: RedisKeys,
    { clock = Date.now, countFlushMs = COUNT_FLUSH_MS }: BacklogTiming = {},
  ) {
    this.clock = clock;
    this.countFlushMs = countFlushMs;
  }

  /**
   * Counts `count` new jobs of the account (with its unwritten changes); answers their priorities, in
   * order (a rank at or below zero, the counter low after Redis was emptied, is FIFO).
   */
  async enqueue(accountId: number, count: number): Promise<number[]> {
    const unwritten = this.unwritten.get(accountId) ?? 0;
    this.unwritten.delete(accountId);
    let last: number;
    try {
      last = await this.write(accountId, unwritten + count);
    } catch (error) {
      if (unwritten !== 0) this.change(accountId, unwritten);
      throw error;
    }
    return Array.from({ length: count }, (_, index) => priorityOfRank(last - count + 1 + index));
  }

  /**
   * FIFO priorities (all 0) for `count` new jobs of an account whose backlog this producer saw small
   * within GUESS_TRUST_MS, so the jobs can be added without a command to the counter: they are counted
   * with this process's next write (within COUNT_FLUSH_MS, or the account's next `enqueue`), whose answer
   * is remembered like any other. A lone event's enqueue is then BullMQ's add alone. Null when the rank
   * must be asked. The guess only errs towards a few more FIFO jobs for an account whose backlog another
   * producer grew meanwhile: at most GUESS_WITHIN per answer and producer; jobs that leave only make the
   * real rank smaller than the one seen.
   */
  guess(accountId: number, count: number): number[] | null {
    const seen = this.seen.get(accountId);
    if (!seen || this.clock() - seen.at > GUESS_TRUST_MS || seen.rank + count > GUESS_WITHIN) return null;
    seen.rank += count;
    this.change(accountId, count);
    return new Array<number>(count).fill(0);
  }

  /** Adds `delta` to the account's counter and remembers the answer (the backlog after it). */
  private async write(accountId: number, delta: number): Promise<number> {
    const rank = Number(await COUNT.run(this.connection, [this.keys.accountBacklog(accountId)], [delta, BACKLOG_KEEP_MS]));
    this.remember(accountId, rank);
    return rank;
  }

  private remember(accountId: number, rank: number): void {
    this.seen.delete(accountId);
    setBounded(this.seen, accountId, { rank, at: this.clock() }, REMEMBERED_ACCOUNTS);
  }

  /** The account's jobs in the queue as the counter says now (with this producer's changes not written yet); 0 when none is counted. */
  async size(accountId: number): Promise<number> {
    const counted = Number((await this.connection.get(this.keys.accountBacklog(accountId))) ?? 0);
    return Math.max(0, counted + (this.unwritten.get(accountId) ?? 0));
  }

  /** A job of the account left the queue (done, stale or failed; not when it was only postponed). */
  settled(accountId: number): void {
    this.change(accountId, -1);
  }

  private change(accountId: number, delta: number): void {
    this.unwritten.set(accountId, (this.unwritten.get(accountId) ?? 0) + delta);
    if (!this.flushTimer) {
      this.flushTimer = setTimeout(() => void this.flush(), this.countFlushMs);
      this.flushTimer.unref();
    }
  }

  /**
   * Writes the summed changes of every account in one round trip (RedisScript.runEach) and remembers the
   * answers; never throws (a lost write is drift, see the class).
   */
  async flush(): Promise<void> {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    const batch = [...this.unwritten].filter(([, delta]) => delta !== 0);
    this.unwritten.clear();
    if (batch.length === 0) return;
    const answers = await COUNT.runEach(
      this.connection,
      batch.map(([accountId, delta]) => ({ keys: [this.keys.accountBacklog(accountId)], args: [delta, BACKLOG_KEEP_MS] })),
    );
    answers.forEach((answer, index) => {
      if (!(answer instanceof Error)) this.remember(batch[index][0], Number(answer));
    });
  }
}
