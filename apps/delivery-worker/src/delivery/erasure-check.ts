import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Batcher } from '@app/runtime';

/** Thrown just before a call whose event was erased meanwhile: the call is not made (CONTRACT §12). */
export class ErasedEventError extends Error {
  constructor(readonly eventSeq: string) {
    super('erased');
    this.name = 'ErasedEventError';
  }
}

/** Seqs among `seqs` whose event is erased: one probe of the primary key per seq, pruned to its day. */
const ERASED_SQL = `SELECT seq::text AS seq FROM events WHERE seq = ANY($1::bigint[]) AND erased`;

/**
 * The last look at an event before its call. A job may have loaded its event before an erasure
 * cleared it (and then waited for a slot, a pace or its subject's turn): the row is read again right
 * before the request goes out, batched with every other call about to start, so a pending delivery
 * of an erased event is never sent even when a worker already holds its job.
 */
@Injectable()
export class ErasureCheck {
  private readonly reads: Batcher<string, boolean>;

  constructor(@InjectDataSource() dataSource: DataSource) {
    this.reads = new Batcher(
      async (seqs) => {
        const rows = await dataSource.query<{ seq: string }[]>(ERASED_SQL, [[...new Set(seqs)]]);
        const erased = new Set(rows.map((row) => row.seq));
        return seqs.map((seq) => ({ ok: true, value: erased.has(seq) }));
      },
      { maxBatch: 500, maxInFlight: 2, lingerMs: 0 },
    );
  }

  /** Resolves when the event may be called; throws ErasedEventError when it was erased. */
  async beforeCall(eventSeq: string): Promise<void> {
    if (await this.reads.submit(eventSeq)) throw new ErasedEventError(eventSeq);
  }
}
