import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * n8n credentials (credentials/): a name, an n8n type, the fields that may be shown, and the data
 * (secrets, OAuth2 tokens) as AES-256-GCM ciphertext with the id of the key it is under. An
 * authorization-code credential waiting for its consent keeps the digest of its `state`.
 */
export class EngineCredentials1764600000000 implements MigrationInterface {
  name = 'EngineCredentials1764600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE engine.credentials (
        id uuid PRIMARY KEY,
        name text NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 200),
        type text NOT NULL,
        settings jsonb NOT NULL DEFAULT '{}',
        data_enc bytea NOT NULL,
        key_id text NOT NULL,
        oauth_state_hash bytea UNIQUE,
        oauth_redirect_url text,
        connected_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX credentials_key_id ON engine.credentials (key_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE engine.credentials`);
  }
}
