import { Injectable } from '@nestjs/common';
import type { ErasureStarted, ErasureView } from '@app/payloads';
import { Sql } from '@app/persistence';
import { DomainError, isTaskId, TaskQueue } from '@app/runtime';
import { requireAccount } from '../require-account';
import type { StartErasureDto } from './data-protection.dto';
import { ERASURE, RECORD_ERASURE } from './erasures.statements';

/** Erasures by subject (CONTRACT §12): recorded as tasks here, worked through by a delivery worker's ErasureRunner. */
@Injectable()
export class ErasuresService {
  constructor(
    private readonly sql: Sql,
    private readonly tasks: TaskQueue,
  ) {}

  async start(body: StartErasureDto): Promise<ErasureStarted> {
    if (body.account_id !== undefined) await requireAccount(this.sql, body.account_id);
    const [task] = await this.sql.rows(RECORD_ERASURE, { subject: body.subject, accountId: body.account_id ?? null });
    await this.tasks.announce('erasure', task.id);
    return { id: task.id, status: 'running' };
  }

  async get(id: string): Promise<ErasureView> {
    const row = isTaskId(id) ? await this.sql.first(ERASURE, { id }) : null;
    if (!row) throw new DomainError('not_found', `erasure ${id} does not exist`);
    return { id: row.id, status: row.status === 'done' ? 'done' : 'running', events_erased: row.events_erased };
  }
}
