import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

export const BOT_WEBHOOK_TYPES = ['message_trigger', 'task_push'] as const;
export type BotWebhookType = (typeof BOT_WEBHOOK_TYPES)[number];

@Entity({ name: 'bot_webhooks' })
export class BotWebhook {
  @PrimaryGeneratedColumn('identity', { type: 'integer', generatedIdentity: 'BY DEFAULT' })
  id!: number;

  @Column({ name: 'account_id', type: 'integer' })
  accountId!: number;

  /** The seed's integrationName; unique per account and type. */
  @Column({ type: 'varchar', length: 128 })
  name!: string;

  @Column({ type: 'varchar', length: 32 })
  type!: BotWebhookType;

  @Column({ type: 'text' })
  url!: string;

  /** Authentication key the signature is made with, sealed by SecretBox; never returned after creation. */
  @Column({ type: 'text' })
  key!: string;

  @Column({ name: 'timeout_ms', type: 'integer', default: 5000 })
  timeoutMs!: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
