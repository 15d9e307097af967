import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { ErasureStarted, ErasureView } from '@app/payloads';
import { DomainError, isTaskId, TaskQueue } from '@app/runtime';
import { requireAccount } from '../require-account';
import type { StartErasureDto } from './data-protection.dto';

/** The highest seq an event stored before now can have (see next_event_seq()): later events are not part of the erasure. */
const SEQ_NOW = `((floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint << 20) | 1048575)`;

/** Erasures by subject (CONTRACT §12): recorded as tasks here, worked through by a delivery worker's ErasureRunner. */
@Injectable()
export class ErasuresService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly tasks: TaskQueue,
  ) {}

  async start(body: StartErasureDto): Promise<ErasureStarted> {
    if (body.account_id !== undefined) await requireAccount(this.dataSource, body.account_id);
    // Events from before the partitioned layout have small seqs, far below this bound.
    const [task] = await this.dataSource.query<{ id: string }[]>(
      `INSERT INTO erasure_tasks (subject, account_id, upper_seq)
       VALUES ($1, $2, ${SEQ_NOW})
       RETURNING id`,
      [body.subject, body.account_id ?? null],
    );
    await this.tasks.announce('erasure', task.id);
    return { id: task.id, status: 'running' };
  }

  async get(id: string): Promise<ErasureView> {
    const rows = isTaskId(id)
      ? await this.dataSource.query<{ id: string; status: string; events_erased: number }[]>(
          `SELECT id, status, events_erased FROM erasure_tasks WHERE id = $1`,
          [id],
        )
      : [];
    if (rows.length === 0) throw new DomainError('not_found', `erasure ${id} does not exist`);
    const [row] = rows;
    return { id: row.id, status: row.status === 'done' ? 'done' : 'running', events_erased: row.events_erased };
  }
}
