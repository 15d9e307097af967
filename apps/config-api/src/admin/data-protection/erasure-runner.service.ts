import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { isPendingSql } from '@app/persistence';
import { checkErasureStamp, ENVIRONMENT, type Environment, REDIS, type RedisClient, stampErasureStep } from '@app/runtime';
import { SteppedTaskRunner } from '../leased-task-runner';

/** Events per step: each step's locks are held for a few milliseconds. */
export const ERASURE_CHUNK = 200;

/** What an erased event's pending delivery ends with (CONTRACT §12). */
export const ERASED_ERROR = 'erased';

interface ErasureTaskRow {
  subject: string;
  account_id: number | null;
  upper_seq: string;
}

/**
 * Clears a subject's stored events, a chunk per transaction: its events are found through
 * events_subject_idx, their attempts' bodies and their messages cleared, and a pending one ends
 * `failed` / `erased`, which makes every job of it stale and which the worker re-reads right before a
 * call. An erased message is the JSON null, so its subject is null and the row leaves the index: each
 * step finds only what is left, and a resumed task needs no cursor. `upper_seq` keeps events accepted
 * after the erasure started out of it. Every step commits under the erasure stamp (erasure-stamp.ts),
 * which tells the workers when that re-read is needed.
 */
@Injectable()
export class ErasureRunner extends SteppedTaskRunner<string> {
  private readonly prefix: string;

  constructor(
    @InjectDataSource() dataSource: DataSource,
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(ENVIRONMENT) environment: Environment,
  ) {
    super(dataSource, 'erasure_tasks', 'erasure');
    this.prefix = environment.redis.prefix;
  }

  /** Without the stamp no step commits: a worker could call an event erased under its eyes. */
  protected override beforeStep(): Promise<void> {
    return stampErasureStep(this.redis, this.prefix);
  }

  protected async step(manager: EntityManager, id: string): Promise<boolean> {
    const [task] = await manager.query<ErasureTaskRow[]>(`SELECT subject, account_id, upper_seq::text AS upper_seq FROM erasure_tasks WHERE id = $1`, [id]);
    const seqs = await subjectEventSeqs(manager, task, ERASURE_CHUNK);
    if (seqs.length > 0) {
      // Attempts first: delivery_attempts is partitioned by event_seq, so the list prunes it to the events' days.
      await manager.query(`UPDATE delivery_attempts SET request_body = '', response_body = NULL WHERE event_seq = ANY($1::bigint[])`, [seqs]);
      await manager.query(
        `UPDATE events
            SET message = 'null'::json, erased = true, updated_at = now(),
                last_error = CASE WHEN ${isPendingSql()} THEN '${ERASED_ERROR}' ELSE last_error END,
                next_attempt_at = CASE WHEN ${isPendingSql()} THEN NULL ELSE next_attempt_at END,
                status = CASE WHEN ${isPendingSql()} THEN 'failed' ELSE status END
          WHERE seq = ANY($1::bigint[])`,
        [seqs],
      );
      await manager.query(`UPDATE erasure_tasks SET events_erased = events_erased + $2 WHERE id = $1`, [id, seqs.length]);
    }
    const more = seqs.length === ERASURE_CHUNK;
    if (!more) {
      // The subject is kept only while it is needed: the log of erasures holds no identifier.
      await manager.query(`UPDATE erasure_tasks SET subject = NULL WHERE id = $1`, [id]);
      await this.finish(manager, id);
    }
    // Last, as near the commit as can be: the stamp must outlive it (else the step rolls back and is taken again).
    if (seqs.length > 0) await checkErasureStamp(this.redis, this.prefix);
    return more;
  }
}

/** Up to `limit` events of the task's subject (and account) accepted before it, locked for the step. */
export async function subjectEventSeqs(manager: Pick<EntityManager, 'query'>, task: ErasureTaskRow, limit: number): Promise<string[]> {
  const account = task.account_id === null ? '' : 'AND account_id = $4';
  const rows = await manager.query<{ seq: string }[]>(
    `SELECT seq::text AS seq FROM events
      WHERE callback_subject(action, message) = $1 AND seq <= $2::bigint ${account}
      ORDER BY seq
      LIMIT $3
        FOR UPDATE`,
    task.account_id === null ? [task.subject, task.upper_seq, limit] : [task.subject, task.upper_seq, limit, task.account_id],
  );
  return rows.map((row) => row.seq);
}
