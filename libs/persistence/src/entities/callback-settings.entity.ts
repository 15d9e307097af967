import { Column, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

export type PermissionMap = Record<string, boolean>;

@Entity({ name: 'callback_settings' })
export class CallbackSettings {
  @PrimaryColumn({ name: 'account_id', type: 'integer' })
  accountId!: number;

  @Column({ name: 'push_url', type: 'text', nullable: true })
  pushUrl!: string | null;

  /** `JSON` or `application/x-www-form-urlencoded` (CONTRACT §2). */
  @Column({ name: 'push_content_type', type: 'varchar', length: 64, default: 'application/x-www-form-urlencoded' })
  pushContentType!: string;

  @Column({ type: 'jsonb', default: () => "'{}'::jsonb" })
  permissions!: PermissionMap;

  /** When the current run of failed attempts to push_url began; null after any success (ENDPOINT_DISABLE_AFTER). */
  @Column({ name: 'failing_since', type: 'timestamptz', nullable: true })
  failingSince!: Date | null;

  /** Set when the worker stopped calling push_url because it failed for too long; cleared by enable or set_url. */
  @Column({ name: 'disabled_at', type: 'timestamptz', nullable: true })
  disabledAt!: Date | null;

  @Column({ name: 'disabled_reason', type: 'text', nullable: true })
  disabledReason!: string | null;

  /** `none` or `subject`: one call at a time per subject, in accepted order (CONTRACT §9). */
  @Column({ name: 'delivery_ordering', type: 'varchar', length: 16, default: 'none' })
  deliveryOrdering!: 'none' | 'subject';

  /** Calls started per second across all workers; null: only the concurrency caps (CONTRACT §9). */
  @Column({ name: 'max_per_second', type: 'integer', nullable: true })
  maxPerSecond!: number | null;

  /** Key names whose values the stored copies hold as "[redacted]" once an event ends (CONTRACT §12). */
  @Column({ name: 'redaction_fields', type: 'text', array: true, default: () => "'{}'" })
  redactionFields!: string[];

  /** Every event of the account up to this seq has ended and is redacted (the background pass's mark); null: none yet. */
  @Column({ name: 'redacted_through_seq', type: 'bigint', nullable: true })
  redactedThroughSeq!: string | null;

  /** The primary's pause (CONTRACT §11): its deliveries wait, unattempted, until resumed. */
  @Column({ type: 'boolean', default: false })
  paused!: boolean;

  /** Bumped on every change so caches can tell a stale notification from a fresh one. */
  @Column({ type: 'integer', default: 0 })
  version!: number;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
