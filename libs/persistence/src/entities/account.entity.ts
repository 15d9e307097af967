import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

@Entity({ name: 'accounts' })
export class Account {
  @PrimaryGeneratedColumn('identity', { type: 'integer', generatedIdentity: 'BY DEFAULT' })
  id!: number;

  @Column({ type: 'varchar', length: 320, unique: true })
  email!: string;

  @Column({ type: 'varchar', length: 200, nullable: true })
  name!: string | null;

  /**
   * Shared secret of the Open API v2 signature, sealed by SecretBox. Encrypted rather than hashed: the
   * server recomputes SHA-256 over email&token&timestamp&nonce&v2, so it needs the token itself.
   */
  @Column({ name: 'open_api_token', type: 'text' })
  openApiToken!: string;


  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  /** Offboarding started (CONTRACT §12): refused everywhere; the row goes once its events are deleted. */
  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true })
  deletedAt!: Date | null;
}
