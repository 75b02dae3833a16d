import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `platform.stamp_run_end`: a BEFORE trigger that stamps a run's end columns, when a row enters a
 * terminal status, with the database clock read at that moment (after any row lock), so the end is
 * never before the start even when the ending transaction began first (a transaction's now() is its start).
 * Arguments: a JSON object {terminal status: [end columns]}; the duration column (ms), or '' for none.
 */
export class RunClock1763769601150 implements MigrationInterface {
  name = 'RunClock1763769601150';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE SCHEMA IF NOT EXISTS platform`);
    await q.query(`
      CREATE FUNCTION platform.stamp_run_end() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        ends jsonb := TG_ARGV[0]::jsonb;
        started timestamptz := (to_jsonb(NEW) ->> 'started_at')::timestamptz;
        at timestamptz;
        patch jsonb := '{}';
        col text;
      BEGIN
        IF NOT ends ? NEW.status THEN
          RETURN NEW;
        END IF;
        IF TG_OP = 'UPDATE' THEN
          IF ends ? OLD.status THEN
            RETURN NEW; -- already ended: its end stays
          END IF;
        END IF;
        at := greatest(clock_timestamp(), started);
        FOR col IN SELECT jsonb_array_elements_text(ends -> NEW.status) LOOP
          patch := patch || jsonb_build_object(col, at);
        END LOOP;
        IF coalesce(TG_ARGV[1], '') <> '' THEN
          patch := patch || jsonb_build_object(TG_ARGV[1], CASE WHEN started IS NULL THEN NULL ELSE round(extract(epoch FROM at - started) * 1000) END);
        END IF;
        RETURN jsonb_populate_record(NEW, patch);
      END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION IF EXISTS platform.stamp_run_end()`);
  }
}
