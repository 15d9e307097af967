import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

@Entity({ name: 'delivery_attempts' })
export class DeliveryAttempt {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'BY DEFAULT' })
  id!: string;

  @Column({ name: 'event_seq', type: 'bigint' })
  eventSeq!: string;

  @Column({ type: 'integer' })
  series!: number;

  /** 1-based number of this attempt across the event's whole life. */
  @Column({ type: 'integer' })
  attempt!: number;

  @Column({ name: 'started_at', type: 'timestamptz' })
  startedAt!: Date;

  @Column({ name: 'duration_ms', type: 'integer' })
  durationMs!: number;

  @Column({ type: 'text' })
  url!: string;

  @Column({ name: 'request_headers', type: 'json' })
  requestHeaders!: Record<string, string>;

  @Column({ name: 'request_body', type: 'text' })
  requestBody!: string;

  @Column({ name: 'response_status', type: 'integer', nullable: true })
  responseStatus!: number | null;

  @Column({ name: 'response_headers', type: 'json', nullable: true })
  responseHeaders!: Record<string, string> | null;

  /** Cut at 4 KiB. */
  @Column({ name: 'response_body', type: 'text', nullable: true })
  responseBody!: string | null;

  @Column({ type: 'text', nullable: true })
  error!: string | null;

  /** The extra destination this attempt was for; null: the primary (push_url). */
  @Column({ name: 'destination_id', type: 'varchar', length: 32, nullable: true })
  destinationId!: string | null;
}
