import { Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { DataSource, EntityManager } from 'typeorm';
import { ApiError, isDatabaseUnavailable, loggableError, loggableErrorText, sqlState } from '@app/runtime';

/** A running task whose heartbeat is older than this has lost its runner (process died): anyone may take it. */
export const TASK_STALE_AFTER_S = 30;
/** How often each config-api process looks for such tasks. */
const RESUME_POLL_MS = 10_000;
/** A step that lost a deadlock is taken again at once, this many times in a row at most. */
const MAX_STEP_RETRIES = 5;

const TASK_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A task id as the tables store them (uuid): anything else is simply not found. */
export function isTaskId(id: string): boolean {
  return TASK_ID.test(id);
}

/** A database outage or a deadlock/serialization victim: the task waits to be resumed rather than failing. */
export function isPassingFailure(error: unknown): boolean {
  return isDatabaseUnavailable(error) || (sqlState(error)?.startsWith('40') ?? false);
}

/** What a task row keeps when an error that is not a database's stopped it (its details go to the log only). */
export const TASK_FAILURE_TEXT = 'stopped by an unexpected error; the config-api log has the details';

/**
 * Why a task stopped, as its row keeps it and the admin API shows it: a fixed description, never an
 * error's own text, which may quote a row's values, a target URL or a credential. A database error is
 * described by its SQLSTATE and statement name (from the statement's text, never its values).
 */
export function describeTaskFailure(error: unknown): string {
  // The service's own refusal (a stored filter it cannot apply, say) names the field and the rule, never a value.
  if (error instanceof ApiError) return error.message;
  return 'database_error' in loggableError(error) ? loggableErrorText(error) : TASK_FAILURE_TEXT;
}

/**
 * Background work stored as rows of `table` (columns id, status, lease_owner, heartbeat_at,
 * created_at), owned by the process named in `lease_owner` while its heartbeat is fresh, and resumed
 * by any config-api process once it is not (after a restart, for one). Subclasses say how a task is
 * worked through (`work`).
 */
export abstract class LeasedTaskRunner<Id extends string | number> implements OnApplicationBootstrap, OnApplicationShutdown {
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

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.resumeAbandoned(), RESUME_POLL_MS);
    this.timer.unref();
    void this.resumeAbandoned();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    await Promise.allSettled([...this.active.values()]);
  }

  /** Starts working on a task this process owns (no-op when it already is). */
  run(id: Id): void {
    if (this.active.has(id) || this.stopping) return;
    const work = this.work(id).finally(() => this.active.delete(id));
    this.active.set(id, work);
  }

  /** Takes over running tasks whose runner stopped beating, one at a time, skipping those another process is taking. */
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
