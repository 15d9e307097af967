import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

@Entity({ name: 'accounts' })
export class Account {
  @PrimaryGeneratedColumn('identity', { type: 'integer', generatedIdentity: 'BY DEFAULT' })
  id!: number;

  @Column({ type: 'varchar', length: 320, unique: true })
  email!: string;

  @Column({ type: 'varchar', length: 200, nullable: true })
  name!: string | null;

  /** Shared secret of the Open API v2 signature; plain because the server must recompute the hash. */
  @Column({ name: 'open_api_token', type: 'varchar', length: 128 })
  openApiToken!: string;

  /** `whsec_<base64>`: the key of the Standard Webhooks signature on callbacks. */
  @Column({ name: 'signing_secret', type: 'varchar', length: 128 })
  signingSecret!: string;

  @Column({ name: 'previous_signing_secret', type: 'varchar', length: 128, nullable: true })
  previousSigningSecret!: string | null;

  @Column({ name: 'previous_secret_expires_at', type: 'timestamptz', nullable: true })
  previousSecretExpiresAt!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
