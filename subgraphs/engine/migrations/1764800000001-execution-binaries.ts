import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * n8n binary data kept outside the run data: one row per file an execution refers to, its bytes
 * in `data` (database mode) or elsewhere (`mode`: filesystem, s3). Rows go with their execution;
 * a trigger queues the files kept elsewhere for deletion (binary_trash, drained by maintenance).
 */
export class ExecutionBinaries1764800000001 implements MigrationInterface {
  name = 'ExecutionBinaries1764800000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE engine.execution_binaries (
        execution_id uuid NOT NULL REFERENCES engine.executions(id) ON DELETE CASCADE,
        id uuid NOT NULL,
        mode text NOT NULL,
        bytes bigint NOT NULL,
        mime_type text NOT NULL,
        file_name text,
        data bytea,
        PRIMARY KEY (execution_id, id)
      )`);
    await q.query(`CREATE INDEX execution_binaries_id ON engine.execution_binaries (id)`);
    await q.query(`CREATE TABLE engine.binary_trash (id uuid PRIMARY KEY, mode text NOT NULL, at timestamptz NOT NULL DEFAULT now())`);
    await q.query(`
      CREATE FUNCTION engine.execution_binaries_trash() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO engine.binary_trash (id, mode) SELECT DISTINCT o.id, o.mode FROM old_rows o WHERE o.mode <> 'database' ON CONFLICT DO NOTHING;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER execution_binaries_trash AFTER DELETE ON engine.execution_binaries
      REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION engine.execution_binaries_trash()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE engine.execution_binaries`);
    await q.query(`DROP FUNCTION engine.execution_binaries_trash()`);
    await q.query(`DROP TABLE engine.binary_trash`);
  }
}
