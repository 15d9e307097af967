import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

export const DESTINATION_TYPES = ['webhook', 'rabbitmq', 'nats', 'mqtt'] as const;
export type DestinationType = (typeof DESTINATION_TYPES)[number];
export const DESTINATION_FORMATS = ['udesk', 'cloudevents'] as const;
export type DestinationFormat = (typeof DESTINATION_FORMATS)[number];
export type DestinationAuthType = 'header' | 'oauth2' | 'mtls';

/** One of an account's destinations (CONTRACT §11), the primary (id `primary`, the push URL) included. */
@Entity({ name: 'destinations' })
export class Destination {
  /** `primary`, or `dst_` + 24 random lowercase characters. */
  @PrimaryColumn({ type: 'varchar', length: 32 })
  id!: string;

  @PrimaryColumn({ name: 'account_id', type: 'integer' })
  accountId!: number;

  @Column({ type: 'varchar', length: 16 })
  type!: DestinationType;

  /** Sealed by SecretBox: the URL may hold a password; null only for a primary without a push URL. */
  @Column({ type: 'text', nullable: true })
  target!: string | null;

  /** The target with any password replaced by `***`, for views. */
  @Column({ name: 'target_shown', type: 'text', nullable: true })
  targetShown!: string | null;

  /** null: every action. */
  @Column({ type: 'text', array: true, nullable: true })
  actions!: string[] | null;

  /** A sift query over the message; null: every message. */
  @Column({ type: 'jsonb', nullable: true })
  filter!: Record<string, unknown> | null;

  /** Webhook body: `JSON` or the form type (CONTRACT §2 values). */
  @Column({ name: 'content_type', type: 'varchar', length: 64, default: 'JSON' })
  contentType!: string;

  @Column({ type: 'varchar', length: 16, default: 'udesk' })
  format!: DestinationFormat;

  /** Sealed JSON of the auth object; null: none. */
  @Column({ type: 'text', nullable: true })
  auth!: string | null;

  @Column({ name: 'auth_type', type: 'varchar', length: 16, nullable: true })
  authType!: DestinationAuthType | null;

  /** `none` or `subject` (CONTRACT §9), per destination. */
  @Column({ type: 'varchar', length: 16, default: 'none' })
  ordering!: 'none' | 'subject';

  @Column({ name: 'max_per_second', type: 'integer', nullable: true })
  maxPerSecond!: number | null;

  @Column({ type: 'boolean', default: false })
  paused!: boolean;

  /** Sealed `whsec_…`: the key of this destination's own signature; null once the destination is deleted. */
  @Column({ name: 'signing_secret', type: 'text', nullable: true })
  signingSecret!: string | null;

  @Column({ name: 'failing_since', type: 'timestamptz', nullable: true })
  failingSince!: Date | null;

  @Column({ name: 'disabled_at', type: 'timestamptz', nullable: true })
  disabledAt!: Date | null;

  @Column({ name: 'disabled_reason', type: 'text', nullable: true })
  disabledReason!: string | null;

  /** Soft delete: views and lists skip the row, deliveries and attempts keep its id. */
  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true })
  deletedAt!: Date | null;

  /** Bumped on every change so caches can tell a stale notification from a fresh one. */
  @Column({ type: 'integer', default: 0 })
  version!: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
