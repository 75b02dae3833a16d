import type { QueryRunner } from 'typeorm';

/**
 * A row's version: a bigint that every UPDATE of the row raises by one, in that same
 * statement (a BEFORE UPDATE trigger), whichever process or code path writes it. Readers order
 * what they see of a row by it (a subscription drops an answer older than one it sent), so it
 * must never go back: it starts at 1 and only the trigger writes it.
 */
export async function addRowVersion(q: QueryRunner, table: string): Promise<void> {
  const [schema, name] = table.split('.');
  await q.query(`ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS version bigint NOT NULL DEFAULT 1`);
  await q.query(`
    CREATE OR REPLACE FUNCTION ${schema}.raise_row_version() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      NEW.version := OLD.version + 1;
      RETURN NEW;
    END $$`);
  await q.query(`DROP TRIGGER IF EXISTS ${name}_version ON ${table}`);
  await q.query(`
    CREATE TRIGGER ${name}_version BEFORE UPDATE ON ${table}
      FOR EACH ROW EXECUTE FUNCTION ${schema}.raise_row_version()`);
}

export async function dropRowVersion(q: QueryRunner, table: string): Promise<void> {
  const name = table.split('.')[1];
  await q.query(`DROP TRIGGER IF EXISTS ${name}_version ON ${table}`);
  await q.query(`ALTER TABLE ${table} DROP COLUMN IF EXISTS version`);
}
