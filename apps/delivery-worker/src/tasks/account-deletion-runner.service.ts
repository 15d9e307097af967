import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager, type QueryRunner } from 'typeorm';
import { Sql } from '@app/persistence';
import { ENVIRONMENT, type Environment } from '@app/runtime';
import { SteppedTaskRunner, waitASlice } from './leased-task-runner';
import { ACCOUNT_EVENT_SEQS, ACCOUNT_SETTLES_IN, DELETE_ATTEMPTS, DELETE_DELIVERIES, DELETE_EVENTS } from './account-deletion.statements';

/** Events (with their attempts) or bot calls per step: short transactions, bounded locks. */
export const DELETION_CHUNK = 1000;

/**
 * Deletes an offboarded account's rows, a chunk per transaction: its events (found newest first
 * through events_account_seq_idx) with their deliveries to every destination, open rows, attempts and
 * event keys, their primary deliveries' statuses booked out of the event tallies (DELETE_DELIVERIES),
 * then its bot calls, then the account row itself, whose cascade takes what is left (destinations,
 * the primary's included, settings, webhooks, portal rows) and which frees its email and its id. An
 * ingest statement that checked the account just before it was marked may still store events of it (no
 * foreign key stops it: events have none), so the row goes only once ACCOUNT_DELETION_SETTLE has passed
 * since the mark, longer than such a statement can run; until then the task waits in slices and then
 * walks the account's events once more, taking what such a statement stored.
 */
@Injectable()
export class AccountDeletionRunner extends SteppedTaskRunner<number> {
  private readonly settleMs: number;
  /** How long each task still waits for its account row to settle, as its last step found. */
  private readonly settling = new Map<number, number>();

  constructor(
    @InjectDataSource() dataSource: DataSource,
    private readonly sql: Sql,
    @Inject(ENVIRONMENT) environment: Environment,
  ) {
    super(dataSource, 'account_deletions', 'account deletion');
    this.settleMs = environment.accountDeletion.settleMs;
  }

  protected override async beforeStep(accountId: number): Promise<void> {
    const waitMs = this.settling.get(accountId);
    if (waitMs === undefined) return;
    this.settling.delete(accountId);
    await waitASlice(waitMs);
  }

  /** An account id (an integer column). */
  protected idOf(text: string): number | null {
    return /^[1-9]\d{0,9}$/.test(text) && Number(text) <= 2_147_483_647 ? Number(text) : null;
  }

  protected async step(manager: EntityManager, accountId: number): Promise<boolean> {
    const runner = manager.queryRunner as QueryRunner;
    const events = await this.sql.rows(ACCOUNT_EVENT_SEQS, { accountId, limit: DELETION_CHUNK }, runner);
    if (events.length > 0) {
      const seqs = events.map((row) => row.seq);
      await this.sql.rows(DELETE_ATTEMPTS, { seqs }, runner);
      await this.sql.rows(DELETE_DELIVERIES, { seqs }, runner);
      await this.sql.rows(DELETE_EVENTS, { seqs, accountId }, runner);
      await manager.query(`UPDATE account_deletions SET events_deleted = events_deleted + $2 WHERE id = $1`, [accountId, seqs.length]);
      return true;
    }
    const [, botCalls] = await manager.query<[unknown[], number]>(
      `DELETE FROM bot_calls WHERE (id, created_at) IN (SELECT id, created_at FROM bot_calls WHERE account_id = $1 LIMIT ${DELETION_CHUNK})`,
      [accountId],
    );
    if (botCalls > 0) return true;
    const settle = await this.sql.first(ACCOUNT_SETTLES_IN, { accountId, settleMs: this.settleMs }, runner);
    if (settle && settle.settles_in_ms > 0) {
      this.settling.set(accountId, settle.settles_in_ms);
      return true;
    }
    for (const table of ['redelivery_tasks', 'delivery_rollups']) await manager.query(`DELETE FROM ${table} WHERE account_id = $1`, [accountId]);
    await manager.query(`DELETE FROM accounts WHERE id = $1`, [accountId]);
    await this.finish(manager, accountId);
    return false;
  }
}
