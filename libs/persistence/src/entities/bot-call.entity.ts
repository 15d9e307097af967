import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';
import type { BotWebhookType } from './bot-webhook.entity';

export const BOT_CALL_OUTCOMES = ['ok', 'failed', 'timeout', 'invalid_answer', 'refused', 'not_found'] as const;
export type BotCallOutcome = (typeof BOT_CALL_OUTCOMES)[number];

@Entity({ name: 'bot_calls' })
export class BotCall {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'BY DEFAULT' })
  id!: string;

  @Column({ name: 'account_id', type: 'integer' })
  accountId!: number;

  @Column({ name: 'bot_webhook_id', type: 'integer', nullable: true })
  botWebhookId!: number | null;

  @Column({ type: 'varchar', length: 32 })
  type!: BotWebhookType;

  @Column({ name: 'integration_name', type: 'varchar', length: 128 })
  integrationName!: string;

  @Column({ type: 'text', nullable: true })
  url!: string | null;

  @Column({ name: 'request_body', type: 'text', nullable: true })
  requestBody!: string | null;

  @Column({ name: 'response_status', type: 'integer', nullable: true })
  responseStatus!: number | null;

  /** Cut at 4 KiB. */
  @Column({ name: 'response_body', type: 'text', nullable: true })
  responseBody!: string | null;

  /** What the bot was answered with. */
  @Column({ type: 'json', nullable: true })
  answer!: unknown;

  @Column({ type: 'varchar', length: 16 })
  outcome!: BotCallOutcome;

  @Column({ type: 'text', nullable: true })
  error!: string | null;

  @Column({ name: 'duration_ms', type: 'integer' })
  durationMs!: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
