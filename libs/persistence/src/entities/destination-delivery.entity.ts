import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import { type EventStatus, FIRST_EVENT_STATUS } from '../events/event-lifecycle';

/**
 * One event's delivery to one extra destination, written by ingest in the event's transaction; its
 * status, series and retry schedule follow the event row's rules (CONTRACT §3, §5). Partitioned by
 * event_seq per UTC day, like delivery_attempts.
 */
@Entity({ name: 'destination_deliveries' })
export class DestinationDelivery {
  @PrimaryColumn({ name: 'event_seq', type: 'bigint' })
  eventSeq!: string;

  @PrimaryColumn({ name: 'destination_id', type: 'varchar', length: 32 })
  destinationId!: string;

  @Column({ name: 'account_id', type: 'integer' })
  accountId!: number;

  @Column({ type: 'varchar', length: 16, default: FIRST_EVENT_STATUS })
  status!: EventStatus;

  @Column({ type: 'integer', default: 0 })
  attempts!: number;

  @Column({ type: 'integer', default: 0 })
  series!: number;

  @Column({ name: 'series_attempts', type: 'integer', default: 0 })
  seriesAttempts!: number;

  /** null on a pending row: waiting for a resume (paused) or never scheduled (the reconciler treats it as due). */
  @Column({ name: 'next_attempt_at', type: 'timestamptz', nullable: true })
  nextAttemptAt!: Date | null;

  @Column({ name: 'delivered_at', type: 'timestamptz', nullable: true })
  deliveredAt!: Date | null;

  @Column({ name: 'last_error', type: 'text', nullable: true })
  lastError!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
