import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import { type EventStatus, FIRST_EVENT_STATUS } from '../events/event-lifecycle';

@Entity({ name: 'events' })
export class EventRecord {
  /**
   * Internal, time-ordered key (epoch milliseconds << 20 | counter, drawn by next_event_seq()): cursor
   * pages, joins and the daily partitions use it; bigint arrives as a string. Rows from before
   * partitioning keep their old, small values.
   */
  @PrimaryColumn({ type: 'bigint', default: () => 'next_event_seq()' })
  seq!: string;

  /** Unique across the service through `event_keys`, not through an index of this partitioned table. */
  @Column({ name: 'event_id', type: 'varchar', length: 128 })
  eventId!: string;

  @Column({ name: 'account_id', type: 'integer' })
  accountId!: number;

  @Column({ type: 'varchar', length: 64 })
  action!: string;

  /** `json`, not `jsonb`: keeps the sender's key order so the delivered body matches what was posted. */
  @Column({ type: 'json' })
  message!: Record<string, unknown>;

  @Column({ type: 'varchar', length: 16, default: FIRST_EVENT_STATUS })
  status!: EventStatus;

  /** Attempts across every series, for operators. */
  @Column({ type: 'integer', default: 0 })
  attempts!: number;

  /** Attempt series: 0 for the original delivery, +1 for each manual redelivery. */
  @Column({ type: 'integer', default: 0 })
  series!: number;

  /** Attempts within the current series: indexes RETRY_SCHEDULE. */
  @Column({ name: 'series_attempts', type: 'integer', default: 0 })
  seriesAttempts!: number;

  /** When the next attempt is due; the reconciler re-enqueues pending events whose time has passed. */
  @Column({ name: 'next_attempt_at', type: 'timestamptz', nullable: true })
  nextAttemptAt!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;

  @Column({ name: 'delivered_at', type: 'timestamptz', nullable: true })
  deliveredAt!: Date | null;

  @Column({ name: 'last_error', type: 'text', nullable: true })
  lastError!: string | null;

  /** Its message (now the JSON null) and its attempts' bodies were cleared by an erasure (CONTRACT §12). */
  @Column({ type: 'boolean', default: false })
  erased!: boolean;
}
