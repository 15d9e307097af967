import { Column, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

export type PermissionMap = Record<string, boolean>;

/**
 * What belongs to the account rather than to one of its destinations: which events it receives
 * (CONTRACT §2 permissions) and what is redacted at rest (§12). The push URL and its delivery options
 * are the destination `primary`'s.
 */
@Entity({ name: 'callback_settings' })
export class CallbackSettings {
  @PrimaryColumn({ name: 'account_id', type: 'integer' })
  accountId!: number;

  @Column({ type: 'jsonb', default: () => "'{}'::jsonb" })
  permissions!: PermissionMap;

  /** Keys whose values the copies the service keeps hold as "[redacted]" once an event has ended (CONTRACT §12). */
  @Column({ name: 'redaction_fields', type: 'text', array: true, default: () => "'{}'" })
  redactionFields!: string[];

  /** The redaction pass has gone through the account's events up to this seq. */
  @Column({ name: 'redacted_through_seq', type: 'bigint', nullable: true })
  redactedThroughSeq!: string | null;

  /** Bumped on every change so caches can tell a stale notification from a fresh one. */
  @Column({ type: 'integer', default: 0 })
  version!: number;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
