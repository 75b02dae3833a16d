import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import type { Environment, KeyService, Tier } from './principal';

/** A platform API key. Only the SHA-256 of the key is stored; the key itself is shown once. */
@Entity({ schema: 'platform', name: 'api_keys' })
export class ApiKeyEntity {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column('text') name: string;
  @Column('text') service: KeyService;
  @Column('text') environment: Environment;
  @Column('text') tier: Tier;
  @Column('text', { array: true }) permissions: string[];
  @Column('bytea', { name: 'key_hash', select: false }) keyHash: Buffer;
  @Column('text', { name: 'key_prefix' }) keyPrefix: string;
  @Column('uuid', { name: 'created_by', nullable: true }) createdBy: string | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
  @Column('timestamptz', { name: 'expires_at', nullable: true }) expiresAt: Date | null;
  @Column('timestamptz', { name: 'revoked_at', nullable: true }) revokedAt: Date | null;
  @Column('timestamptz', { name: 'last_used_at', nullable: true }) lastUsedAt: Date | null;
  @Column('text', { name: 'last_used_ip', nullable: true }) lastUsedIp: string | null;
  @Column('bigint', { name: 'request_count', default: 0 }) requestCount: string;
}
