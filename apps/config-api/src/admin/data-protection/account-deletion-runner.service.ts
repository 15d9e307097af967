import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { SteppedTaskRunner } from '../leased-task-runner';

/** Events (with their attempts) or bot calls per step: short transactions, bounded locks. */
export const DELETION_CHUNK = 1000;

/**
 * Deletes an offboarded account's rows, a chunk per transaction: its events (found newest first
 * through events_account_seq_idx) with their attempts and event keys, then its bot calls, then the
 * account row itself, whose cascade takes what is left (settings, webhooks, portal rows) and which
 * frees its email. Should an event slip in after the account was marked (an ingest statement that
 * checked the account just before), the final delete fails on the events' foreign key and the task
 * is resumed from the events again.
 */
@Injectable()
export class AccountDeletionRunner extends SteppedTaskRunner<number> {
  constructor(@InjectDataSource() dataSource: DataSource) {
    super(dataSource, 'account_deletions', 'account deletion');
  }

  protected async step(manager: EntityManager, accountId: number): Promise<boolean> {
    const events = await manager.query<{ seq: string }[]>(
      `SELECT seq::text AS seq FROM events WHERE account_id = $1 ORDER BY seq DESC LIMIT ${DELETION_CHUNK}`,
      [accountId],
    );
    if (events.length > 0) {
      const seqs = events.map((row) => row.seq);
      // These tables are partitioned by the event's seq: the list prunes them to the events' days.
      await manager.query(`DELETE FROM delivery_attempts WHERE event_seq = ANY($1::bigint[])`, [seqs]);
      await manager.query(`DELETE FROM destination_deliveries WHERE event_seq = ANY($1::bigint[])`, [seqs]);
      await manager.query(`DELETE FROM events WHERE seq = ANY($1::bigint[])`, [seqs]);
      await manager.query(`DELETE FROM event_keys WHERE event_seq = ANY($1::bigint[]) AND account_id = $2`, [seqs, accountId]);
      await manager.query(`UPDATE account_deletions SET events_deleted = events_deleted + $2 WHERE id = $1`, [accountId, seqs.length]);
      return true;
    }
    const [, botCalls] = await manager.query<[unknown[], number]>(
      `DELETE FROM bot_calls WHERE (id, created_at) IN (SELECT id, created_at FROM bot_calls WHERE account_id = $1 LIMIT ${DELETION_CHUNK})`,
      [accountId],
    );
    if (botCalls > 0) return true;
    for (const table of ['redelivery_tasks', 'delivery_rollups']) await manager.query(`DELETE FROM ${table} WHERE account_id = $1`, [accountId]);
    await manager.query(`DELETE FROM accounts WHERE id = $1`, [accountId]);
    await this.finish(manager, accountId);
    return false;
  }
}
