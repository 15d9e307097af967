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

  /** Bumped on every change so caches can tell a stale notification from a fresh one. */
  @Column({ type: 'integer', default: 0 })
  version!: number;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
