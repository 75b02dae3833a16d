import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

export const WEBHOOK_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export const WEBHOOK_AUTH_TYPES = ['none', 'apiKey', 'hmac', 'basic', 'oauth'] as const;
export const RESPONSE_MODES = ['onReceived', 'lastNode'] as const;

/** The parts of a trigger's authentication that may be shown; the secret is in secret_hash or secret_enc. */
export interface WebhookAuthConfig {
  apiKeyHeader?: string;
  hmacHeader?: string;
  hmacAlgorithm?: 'sha256' | 'sha1' | 'sha512';
  username?: string;
}

export interface WebhookRateLimit {
  windowMs: number;
  maxRequests: number;
  /** ip (default), global, or header:<name>. */
  keyBy: string;
}

/**
 * An inbound webhook that starts a workflow (engine.webhook_triggers). The API key, basic
 * password and bearer token are kept as SHA-256 digests; the HMAC secret, needed to verify,
 * AES-256-GCM encrypted with the trigger id as associated data. None is ever returned.
 */
@Entity({ schema: 'engine', name: 'webhook_triggers' })
export class WebhookTriggerEntity {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column('uuid', { name: 'workflow_id' }) workflowId: string;
  @Column('text') path: string;
  @Column('text') method: (typeof WEBHOOK_METHODS)[number];
  @Column('text', { name: 'auth_type' }) authType: (typeof WEBHOOK_AUTH_TYPES)[number];
  @Column('jsonb', { name: 'auth_config' }) authConfig: WebhookAuthConfig;
  @Column('bytea', { name: 'secret_hash', nullable: true, select: false }) secretHash: Buffer | null;
  @Column('bytea', { name: 'secret_enc', nullable: true, select: false }) secretEnc: Buffer | null;
  @Column('text', { name: 'response_mode' }) responseMode: (typeof RESPONSE_MODES)[number];
  @Column('jsonb', { name: 'rate_limit', nullable: true }) rateLimit: WebhookRateLimit | null;
  @Column('boolean') active: boolean;
  @Column('uuid', { name: 'created_by', nullable: true }) createdBy: string | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
}

@Entity({ schema: 'engine', name: 'webhook_logs' })
export class WebhookLogEntity {
  @PrimaryGeneratedColumn('increment', { type: 'bigint' }) id: string;
  @Column('uuid', { name: 'webhook_id' }) webhookId: string;
  @Column('timestamptz') at: Date;
  @Column('text') method: string;
  @Column('text', { name: 'source_ip', nullable: true }) sourceIp: string | null;
  @Column('text') status: 'success' | 'failed' | 'rejected';
  @Column('text', { nullable: true }) reason: string | null;
  @Column('integer', { name: 'status_code' }) statusCode: number;
  @Column('integer', { name: 'response_time_ms' }) responseTimeMs: number;
  @Column('uuid', { name: 'execution_id', nullable: true }) executionId: string | null;
  @Column('boolean') test: boolean;
}
