import { defineStatement } from '@app/persistence';

/** The highest seq an event stored before now can have (see next_event_seq()): later events are not part of the erasure. */
const SEQ_NOW = `((floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint << 20) | 1048575)`;

/**
 * Records an erasure by subject (of one account, or of every account when null), bounded to the events
 * stored before now: events from before the partitioned layout have small seqs, far below this bound.
 */
export const RECORD_ERASURE = defineStatement<{ subject: string; accountId: number | null }, { id: string }>(
  'admin-record-erasure',
  'plain',
  (p) => `
  INSERT INTO erasure_tasks (subject, account_id, upper_seq)
  VALUES (${p.subject}, ${p.accountId}, ${SEQ_NOW})
  RETURNING id`,
);

/** An erasure as its status answer shows it. */
export const ERASURE = defineStatement<{ id: string }, { id: string; status: string; events_erased: number }>(
  'admin-erasure',
  'plain',
  (p) => `SELECT id, status, events_erased FROM erasure_tasks WHERE id = ${p.id}`,
);
