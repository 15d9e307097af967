import { defineStatement, PENDING_STATUS_LIST } from '@app/persistence';

/** Transaction-scoped advisory locks (this key, the account id): one process works on an account at a time. */
const REDACTION_LOCK_KEY = 7_263_511;

/** Every delivery of the event has ended (any destination, CONTRACT §12), or it was erased (nothing left to redact). */
const ENDED = (event: string) =>
  `(${event}.erased OR NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_seq = ${event}.seq AND d.status IN ${PENDING_STATUS_LIST}))`;

export const ACCOUNTS_WITH_REDACTION = defineStatement<Record<string, never>, { account_id: number }>(
  'redaction-accounts',
  'plain',
  () => `SELECT account_id FROM callback_settings WHERE cardinality(redaction_fields) > 0`,
);

/** The account's lock for this transaction, and its fields and mark; no row when another process holds the lock. */
export const LOCK_REDACTION = defineStatement<{ accountId: number }, { fields: string[]; through: string | null }>(
  'redaction-lock',
  'plain',
  (p) => `
  SELECT redaction_fields AS fields, redacted_through_seq::text AS through
    FROM callback_settings
   WHERE account_id = ${p.accountId} AND pg_try_advisory_xact_lock(${REDACTION_LOCK_KEY}, ${p.accountId})`,
);

export interface ScannedEvent {
  seq: string;
  message: string;
  ended: boolean;
}

/** The account's next events after `after`, in seq order, with whether each has ended. */
export const SCAN_EVENTS = defineStatement<{ accountId: number; after: string; limit: number }, ScannedEvent>(
  'redaction-scan',
  'plain',
  (p) => `
  SELECT e.seq::text AS seq, e.message::text AS message, ${ENDED('e')} AS ended
    FROM events e
   WHERE e.account_id = ${p.accountId} AND e.seq > ${p.after}::bigint
   ORDER BY e.seq
   LIMIT ${p.limit}`,
);

/**
 * Writes redacted messages, each only if the row still holds the message it was made from, is not
 * erased and has still ended, all checked on the row as it is when written (a concurrent erasure is
 * waited for, then seen): an erased message is never written back, and an event redelivered meanwhile
 * keeps its message until it ends again. Answers the events written.
 */
export const REDACT_MESSAGES = defineStatement<{ seqs: string[]; read: string[]; redacted: string[] }, { seq: string }>(
  'redaction-messages',
  'plain',
  (p) => `
  UPDATE events e SET message = v.redacted::json
    FROM unnest(${p.seqs}::bigint[], ${p.read}::text[], ${p.redacted}::text[]) AS v(seq, read, redacted)
   WHERE e.seq = v.seq AND e.seq = ANY(${p.seqs}::bigint[])
     AND e.message::text = v.read AND NOT e.erased AND ${ENDED('e')}
  RETURNING e.seq::text AS seq`,
);

/** The request bodies attempts stored (those from before the delivery model); the others are rebuilt from the message, redacted with it. */
export const STORED_REQUEST_BODIES = defineStatement<{ seqs: string[] }, { event_seq: string; id: string; request_body: string }>(
  'redaction-stored-bodies',
  'plain',
  (p) => `
  SELECT event_seq::text AS event_seq, id::text AS id, request_body FROM delivery_attempts
   WHERE event_seq = ANY(${p.seqs}::bigint[]) AND request_body IS NOT NULL AND request_body <> ''`,
);

/** Writes redacted request bodies, each only if it is still the body read: one an erasure emptied meanwhile stays empty. */
export const REDACT_REQUEST_BODIES = defineStatement<{ seqs: string[]; ids: string[]; read: string[]; redacted: string[] }>(
  'redaction-request-bodies',
  'plain',
  (p) => `
  UPDATE delivery_attempts a SET request_body = v.redacted
    FROM unnest(${p.seqs}::bigint[], ${p.ids}::bigint[], ${p.read}::text[], ${p.redacted}::text[]) AS v(event_seq, id, read, redacted)
   WHERE a.event_seq = v.event_seq AND a.id = v.id AND a.event_seq = ANY(${p.seqs}::bigint[]) AND a.request_body = v.read`,
);

export const MOVE_REDACTION_MARK = defineStatement<{ accountId: number; through: string }>(
  'redaction-mark',
  'plain',
  (p) => `UPDATE callback_settings SET redacted_through_seq = ${p.through}::bigint WHERE account_id = ${p.accountId}`,
);
