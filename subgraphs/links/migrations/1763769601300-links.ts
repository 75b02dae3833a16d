import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The link service. A protected link keeps only an argon2id hash of its
 * password or PIN. Verification attempts are rows, so the lockout (5 failures per address and
 * link in 15 minutes) is shared by every process and survives restarts.
 */
export class Links1763769601300 implements MigrationInterface {
  name = 'Links1763769601300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE SCHEMA IF NOT EXISTS links`);
    await q.query(`
      CREATE TABLE links.links (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        slug text NOT NULL UNIQUE CHECK (slug ~ '^[A-Za-z0-9_-]{3,64}$' AND lower(slug) NOT IN ('api')),
        url text NOT NULL CHECK (url ~ '^https?://' AND length(url) <= 2048),
        owner_id text NOT NULL,
        is_active boolean NOT NULL DEFAULT true,
        expires_at timestamptz,
        protection_type text NOT NULL DEFAULT 'none' CHECK (protection_type IN ('none','password','pin')),
        secret_hash text,
        protection_hint text CHECK (length(protection_hint) <= 200),
        content_classification text NOT NULL DEFAULT 'general' CHECK (content_classification IN ('general','personal','work','nsfw')),
        visits integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CHECK ((protection_type = 'none') = (secret_hash IS NULL))
      )`);
    await q.query(`CREATE INDEX links_owner_idx ON links.links (owner_id, created_at DESC, id)`);
    await q.query(`
      CREATE TABLE links.visits (
        id bigserial PRIMARY KEY,
        link_id uuid NOT NULL REFERENCES links.links(id) ON DELETE CASCADE,
        at timestamptz NOT NULL DEFAULT now(),
        referrer text,
        user_agent text,
        country text
      )`);
    await q.query(`CREATE INDEX visits_link_idx ON links.visits (link_id, at DESC)`);
    await q.query(`
      CREATE TABLE links.attempts (
        id bigserial PRIMARY KEY,
        link_id uuid NOT NULL REFERENCES links.links(id) ON DELETE CASCADE,
        ip text NOT NULL,
        at timestamptz NOT NULL DEFAULT now(),
        success boolean NOT NULL
      )`);
    await q.query(`CREATE INDEX attempts_window_idx ON links.attempts (link_id, ip, at) WHERE NOT success`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP SCHEMA links CASCADE`);
  }
}
