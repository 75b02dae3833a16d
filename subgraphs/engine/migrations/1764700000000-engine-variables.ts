import type { MigrationInterface, QueryRunner } from 'typeorm';

/** n8n's variables: one text value per key, read by every workflow as `$vars.<key>`. */
export class EngineVariables1764700000000 implements MigrationInterface {
  name = 'EngineVariables1764700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE engine.variables (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        key text NOT NULL UNIQUE CHECK (key ~ '^[A-Za-z0-9_]{1,50}$'),
        value text NOT NULL CHECK (length(value) <= 1000),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE engine.variables`);
  }
}
