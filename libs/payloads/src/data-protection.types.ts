/** Data protection answers of the admin API (CONTRACT §12). */

/** The subject kinds of CONTRACT §9, the one key of an erasure. */
export const SUBJECT_KINDS = ['customer', 'organization', 'sub_session', 'conversation'] as const;
export type SubjectKind = (typeof SUBJECT_KINDS)[number];

export type ErasureStatus = 'running' | 'done';

/** `POST /admin/v1/erasures` (202) and `GET /admin/v1/erasures/:id`. */
export interface ErasureView {
  id: string;
  status: ErasureStatus;
  events_erased: number;
}

/** `POST /admin/v1/erasures` answers only the start. */
export type ErasureStarted = Pick<ErasureView, 'id' | 'status'>;

/** `PUT /admin/v1/accounts/:id/redaction`. */
export interface RedactionChange {
  fields: string[];
}

/** What a stored copy holds in place of a redacted value. */
export const REDACTED_VALUE = '[redacted]';
