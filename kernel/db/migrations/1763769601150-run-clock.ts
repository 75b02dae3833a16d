import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One clock for the end of a run. A row's start is written by one transaction and its end (done,
 * failed, cancelled) by another; `now()` is each transaction's own start time, so a cancel whose
 * transaction began before the start committed came out "ended before it started" (a negative
 * duration, a CHECK violation, a 500). `platform.stamp_run_end` is a BEFORE trigger for any
 * table with a `started_at`: when a row enters a terminal status it stamps the end columns with
 * the database clock read at that moment — after any row lock was waited for, never before the
 * start — and derives the duration from exactly that value.
 *
 * Trigger arguments: 1. a JSON object {terminal status: [end columns]}; 2. the duration column
 * (milliseconds), or '' for none.
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
