import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `platform.stamp_run_end` (RunClock1763769601150) leaves a row that is not entering a terminal
 * status before it reads anything else: it turned every inserted and every started row into
 * JSON (`to_jsonb(NEW)`, context and all) only to find nothing to stamp. It reads `started_at`
 * as a column now; the stamps are the same, so down keeps this body.
 */
export class RunClockEarlyExit1763769601790 implements MigrationInterface {
  name = 'RunClockEarlyExit1763769601790';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION platform.stamp_run_end() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        ends jsonb := TG_ARGV[0]::jsonb;
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
        at := greatest(clock_timestamp(), NEW.started_at);
        FOR col IN SELECT jsonb_array_elements_text(ends -> NEW.status) LOOP
          patch := patch || jsonb_build_object(col, at);
        END LOOP;
        IF coalesce(TG_ARGV[1], '') <> '' THEN
          patch := patch || jsonb_build_object(TG_ARGV[1], CASE WHEN NEW.started_at IS NULL THEN NULL ELSE round(extract(epoch FROM at - NEW.started_at) * 1000) END);
        END IF;
        RETURN jsonb_populate_record(NEW, patch);
      END $$`);
  }

  async down(): Promise<void> {}
}
