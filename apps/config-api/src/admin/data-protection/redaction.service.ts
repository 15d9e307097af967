import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { AccountView } from '@app/payloads';
import { DomainError, TaskQueue } from '@app/runtime';
import { AccountsService } from '../accounts/accounts.service';

@Injectable()
export class RedactionService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly accounts: AccountsService,
    private readonly tasks: TaskQueue,
  ) {}

  /**
   * `PUT /admin/v1/accounts/:id/redaction`: the fields, deduplicated. The delivery workers' redaction
   * pass starts again from the account's first event, so events that ended before are redacted too; the
   * announced task wakes a pass at once (the workers also pass every few seconds on their own).
   */
  async set(accountId: number, fields: string[]): Promise<AccountView> {
    const unique = [...new Set(fields)];
    const [rows] = await this.dataSource.query<[unknown[], number]>(
      `UPDATE callback_settings s SET redaction_fields = $2::text[], redacted_through_seq = NULL, updated_at = now()
         FROM accounts a
        WHERE s.account_id = $1 AND a.id = s.account_id AND a.deleted_at IS NULL
       RETURNING s.account_id`,
      [accountId, unique],
    );
    if (rows.length === 0) throw new DomainError('not_found', `account ${accountId} does not exist`);
    if (unique.length > 0) await this.tasks.announce('redaction', accountId);
    return this.accounts.view(accountId);
  }
}
