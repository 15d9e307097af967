import { type BeforeApplicationShutdown, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { DataSource, EntityManager } from 'typeorm';
import { DomainError, isDatabaseUnavailable, loggableError, loggableErrorText, sqlState, within } from '@app/runtime';

/** A running task whose heartbeat is older than this has lost its runner (process died): anyone may take it. */
export const TASK_STALE_AFTER_S = 30;
/** How often each worker looks for tasks nobody runs (recorded while no worker took their job, or abandoned). */
export const TASK_POLL_MS = 10_000;
/**
 * At shutdown (within the process's 8 s deadline, after the delivery pipeline's own bounds): how long the
 * steps in flight may take to end, and then giving up the leases.
 */
export const SHUTDOWN_BOUNDS_MS = { steps: 1_000, release: 500 } as const;
/** A task that must wait (an erasure's second pass, an account row's settle time) waits in slices this long, each a step that keeps its heartbeat fresh. */
export const WAIT_SLICE_MS = 1_000;

/** One slice of a wait of `ms` (at most WAIT_SLICE_MS), before the task's next step. */
export function waitASlice(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.min(ms, WAIT_SLICE_MS)));
}

/** A step that lost a deadlock is taken again at once, this many times in a row at most. */
const MAX_STEP_RETRIES = 5;

/** A database outage or a deadlock/serialization victim: the task waits to be resumed rather than failing. */
export function isPassingFailure(error: unknown): boolean {
  return isDatabaseUnavailable(error) || (sqlState(error)?.startsWith('40') ?? false);
}

/** What a task row keeps when an error that is not a database's stopped it (its details go to the log only). */
export const TASK_FAILURE_TEXT = 'stopped by an unexpected error; the delivery worker log has the details';

/**
 * Why a task stopped, as its row keeps it and the admin API shows it: a fixed description, never an
 * error's own text, which may quote a row's values, a target URL or a credential. A database error is
 * described by its SQLSTATE and statement name (from the statement's text, never its values); a stored
 * filter the service refuses (validationFailed) by the fields and the service's own fixed problems.
 */
export function describeTaskFailure(error: unknown): string {
  if (error instanceof DomainError && error.code === 'validation_failed' && error.details?.length) {
    return `the task's filter is refused: ${error.details.map((detail) => `${detail.path}: ${detail.problem}`).join('; ')}`;
  }
  return 'database_error' in loggableError(error) ? loggableErrorText(error) : TASK_FAILURE_TEXT;
}

/**
 * Background work stored as rows of `table` (columns id, status, lease_owner, heartbeat_at,
 * created_at), owned by the worker named in `lease_owner` while its heartbeat is fresh. config-api only
 * records a row (unclaimed: no owner, no heartbeat) and announces it on the tasks queue; the worker that
 * takes the job claims the row (`take`), and every worker also claims, every TASK_POLL_MS, rows that
 * nobody claimed or whose runner stopped beating (`resumeAbandoned`), so neither a lost job nor a
 * killed worker loses a task. Subclasses say how a task is worked through (`work`).
 */
export abstract class LeasedTaskRunner<Id extends string | number> implements OnApplicationBootstrap, BeforeApplicationShutdown {
  readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  protected readonly logger = new Logger(this.constructor.name);
  private readonly active = new Map<Id, Promise<void>>();
  private timer: NodeJS.Timeout | null = null;
  protected stopping = false;

  protected constructor(
    protected readonly dataSource: DataSource,
    protected readonly table: string,
    private readonly what: string,
  ) {}

  /** Works on a task this process owns until it is done, paused, or the process stops. */
  protected abstract work(id: Id): Promise<void>;

  /** The task id a job names, or null when the text cannot be one (a job is only a hint: its row decides). */
  protected abstract idOf(text: string): Id | null;

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.resumeAbandoned(), TASK_POLL_MS);
    this.timer.unref();
    void this.resumeAbandoned();
  }

  /**
   * Before the connections close (onApplicationShutdown): the step in flight commits or rolls back whole,
   * then this worker's leases are given up, so another worker's next poll goes on with the tasks at once
   * rather than once their heartbeat is stale.
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    // Bounded: with PostgreSQL away a step waits for a connection, and the process must still exit (the
    // step's transaction then never commits, and the stale heartbeat brings the task back to a worker).
    const stopped = await within(Promise.allSettled([...this.active.values()]), SHUTDOWN_BOUNDS_MS.steps, 'the running steps').then(
      () => true,
      () => false,
    );
    if (!stopped) return;
    await within(
      this.dataSource.query(`UPDATE ${this.table} SET lease_owner = NULL, heartbeat_at = NULL WHERE lease_owner = $1 AND status = 'running'`, [this.owner]),
      SHUTDOWN_BOUNDS_MS.release,
      'PostgreSQL',
    ).catch((error: unknown) => this.logger.warn(`giving up the ${this.what}s this worker ran: ${loggableErrorText(error)}`));
  }

  /**
   * A job announced the task: claims its row if nobody runs it (just recorded, or its runner stopped
   * beating) and starts working on it. Answers whether this process runs it now; a task another worker
   * holds, a finished or unknown one is left alone.
   */
  async take(text: string): Promise<boolean> {
    const id = this.idOf(text);
    if (id === null || this.stopping) return false;
    if (this.active.has(id)) return true;
    const [rows] = await this.dataSource.query<[{ id: Id }[], number]>(
      `UPDATE ${this.table} SET lease_owner = $2, heartbeat_at = now()
        WHERE id = $1 AND status = 'running' AND (heartbeat_at IS NULL OR heartbeat_at < now() - $3 * interval '1 second')
       RETURNING id`,
      [id, this.owner, TASK_STALE_AFTER_S],
    );
    if (rows.length === 0) return false;
    this.run(rows[0].id);
    return true;
  }

  /** Starts working on a task this process owns (no-op when it already is). */
  run(id: Id): void {
    if (this.active.has(id) || this.stopping) return;
    const work = this.work(id).finally(() => this.active.delete(id));
    this.active.set(id, work);
  }

  /** Takes over running tasks nobody claimed or whose runner stopped beating, oldest first, one at a time, skipping those another worker is taking. */
  async resumeAbandoned(): Promise<void> {
    try {
      for (;;) {
        if (this.stopping) return;
        const [rows] = await this.dataSource.query<[{ id: Id }[], number]>(
          `UPDATE ${this.table} SET lease_owner = $1, heartbeat_at = now()
            WHERE id = (SELECT id FROM ${this.table}
                         WHERE status = 'running' AND (heartbeat_at IS NULL OR heartbeat_at < now() - $2 * interval '1 second')
                         ORDER BY created_at
                         LIMIT 1
                           FOR UPDATE SKIP LOCKED)
           RETURNING id`,
          [this.owner, TASK_STALE_AFTER_S],
        );
        if (rows.length === 0) return;
        this.logger.log(`resuming ${this.what} ${rows[0].id}`);
        this.run(rows[0].id);
      }
    } catch (error) {
      this.logger.warn(`looking for abandoned ${this.what}s failed: ${loggableErrorText(error)}`);
    }
  }
}

/**
 * A task worked through in steps, each in one short transaction that first locks the task row and
 * checks the lease, so a step is applied once even when a slow runner and the one that took its task
 * over race. Whatever stops it, the task stays running and is resumed from its last committed step.
 */
export abstract class SteppedTaskRunner<Id extends string | number> extends LeasedTaskRunner<Id> {
  /** One step inside the transaction that holds the task row; answers whether more remains (if not, it called `finish`). */
  protected abstract step(manager: EntityManager, id: Id): Promise<boolean>;

  /** Runs before each step's transaction, outside it (ErasureRunner: the erasure stamp, or a wait for its second pass). */
  protected async beforeStep(_id: Id): Promise<void> {}

  /** Runs once a step's transaction has committed (ErasureRunner: what it keeps in memory follows only what is stored). */
  protected afterCommit(_id: Id): void {}

  protected async finish(manager: EntityManager, id: Id): Promise<void> {
    await manager.query(`UPDATE ${this.table} SET status = 'done', finished_at = now(), heartbeat_at = now() WHERE id = $1`, [id]);
  }

  protected async work(id: Id): Promise<void> {
    let retries = 0;
    try {
      for (;;) {
        if (this.stopping) return;
        try {
          if (!(await this.oneStep(id))) return;
          retries = 0;
        } catch (error) {
          // A deadlock or serialization victim (a worker's batch took the same rows in another order): the step rolled back whole, so take it again.
          if (!sqlState(error)?.startsWith('40') || retries >= MAX_STEP_RETRIES) throw error;
          retries += 1;
        }
      }
    } catch (error) {
      this.logger.warn(`task ${id} of ${this.table} paused: ${loggableErrorText(error)}`);
      if (isPassingFailure(error)) return;
      // Kept for operators; the stale heartbeat brings the task back to a runner.
      await this.dataSource
        .query(`UPDATE ${this.table} SET error = $3 WHERE id = $1 AND lease_owner = $2`, [id, this.owner, describeTaskFailure(error)])
        .catch((failure: unknown) => this.logger.warn(`recording why task ${id} paused: ${loggableErrorText(failure)}`));
    }
  }

  private async oneStep(id: Id): Promise<boolean> {
    await this.beforeStep(id);
    const more = await this.dataSource.transaction(async (manager) => {
      const owned = await manager.query<unknown[]>(`SELECT 1 FROM ${this.table} WHERE id = $1 AND lease_owner = $2 AND status = 'running' FOR UPDATE`, [id, this.owner]);
      if (owned.length === 0) return false;
      const more = await this.step(manager, id);
      if (more) await manager.query(`UPDATE ${this.table} SET heartbeat_at = now() WHERE id = $1`, [id]);
      return more;
    });
    this.afterCommit(id);
    return more;
  }
}
