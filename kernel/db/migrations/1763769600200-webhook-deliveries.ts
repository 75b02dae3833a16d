import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Outbound webhook deliveries (kernel/webhooks.ts) and one row per delivery attempt. */
export class WebhookDeliveries1763769600200 implements MigrationInterface {
  name = 'WebhookDeliveries1763769600200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE SCHEMA IF NOT EXISTS platform`);
    // body holds the exact bytes that are signed and sent, so every retry is byte-identical.
    // secret_enc is AES-256-GCM (version, iv, tag, ciphertext); NULL when the delivery is unsigned.
    await q.query(`
      CREATE TABLE platform.webhook_deliveries (
        id uuid PRIMARY KEY,
        url text NOT NULL,
        event text NOT NULL CHECK (length(event) BETWEEN 1 AND 200),
        body text NOT NULL,
        secret_enc bytea,
        state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending','delivered','failed')),
        source_service text NOT NULL,
        resource_type text NOT NULL,
        resource_id text NOT NULL,
        max_attempts integer NOT NULL CHECK (max_attempts >= 1),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        delivered_at timestamptz,
        CHECK ((state = 'delivered') = (delivered_at IS NOT NULL))
      )`);
    await q.query(`CREATE INDEX webhook_deliveries_resource_idx ON platform.webhook_deliveries (resource_type, resource_id, created_at DESC)`);
    await q.query(`CREATE INDEX webhook_deliveries_created_idx ON platform.webhook_deliveries (created_at DESC)`);
    await q.query(`
      CREATE TABLE platform.webhook_delivery_attempts (
        delivery_id uuid NOT NULL REFERENCES platform.webhook_deliveries(id) ON DELETE CASCADE,
        attempt integer NOT NULL CHECK (attempt >= 1),
        status integer,
        error text,
        duration_ms integer NOT NULL CHECK (duration_ms >= 0),
        at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (delivery_id, attempt)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE platform.webhook_delivery_attempts`);
    await q.query(`DROP TABLE platform.webhook_deliveries`);
  }
}
