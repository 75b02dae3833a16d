import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The kernel's own schema: the platform-wide API key store and its usage counters. */
export class PlatformSchema1763769600000 implements MigrationInterface {
  name = 'PlatformSchema1763769600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE SCHEMA IF NOT EXISTS platform`);
    await q.query(`
      CREATE TABLE platform.api_keys (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
        service text NOT NULL CHECK (service IN ('control-plane','promptlib','engine','links','infra')),
        environment text NOT NULL CHECK (environment IN ('live','test')),
        tier text NOT NULL CHECK (tier IN ('free','starter','professional','enterprise')),
        permissions text[] NOT NULL,
        key_hash bytea NOT NULL UNIQUE,
        key_prefix text NOT NULL,
        created_by uuid REFERENCES platform.api_keys(id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz,
        revoked_at timestamptz,
        last_used_at timestamptz,
        last_used_ip text,
        request_count bigint NOT NULL DEFAULT 0
      )`);
    await q.query(`CREATE INDEX api_keys_created_by_idx ON platform.api_keys (created_by)`);
    await q.query(`
      CREATE TABLE platform.api_key_usage (
        key_id uuid NOT NULL REFERENCES platform.api_keys(id) ON DELETE CASCADE,
        day date NOT NULL,
        requests bigint NOT NULL DEFAULT 0 CHECK (requests >= 0),
        PRIMARY KEY (key_id, day)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE platform.api_key_usage`);
    await q.query(`DROP TABLE platform.api_keys`);
  }
}
