import type { MigrationInterface, QueryRunner } from 'typeorm';
import { AddJob1763769601700 } from './1763769601700-add-job';

/**
 * A job remembers the W3C `traceparent` of the span that enqueued it, so the worker that runs it
 * (in this process or another) continues that trace. `platform.add_job` takes it as a ninth
 * argument, NULL by default, so calls with the eight earlier arguments keep working.
 */
export class JobTraceParent1763769601900 implements MigrationInterface {
  name = 'JobTraceParent1763769601900';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE platform.jobs ADD COLUMN trace_parent text`);
    await q.query(`DROP FUNCTION platform.add_job(text, jsonb, smallint, timestamptz, integer, integer, integer, text)`);
    await q.query(`
      CREATE FUNCTION platform.add_job(job_name text, job_data jsonb, job_priority smallint, job_run_at timestamptz,
                                       job_max_attempts integer, job_backoff_ms integer, job_timeout_ms integer, job_key text,
                                       job_trace_parent text DEFAULT NULL)
      RETURNS uuid LANGUAGE plpgsql VOLATILE AS $$
      DECLARE
        added uuid;
      BEGIN
        FOR attempt IN 1..3 LOOP
          INSERT INTO platform.jobs (name, data, priority, run_at, max_attempts, backoff_ms, timeout_ms, key, trace_parent)
          VALUES (job_name, coalesce(job_data, 'null'::jsonb), job_priority, coalesce(job_run_at, now()), job_max_attempts, job_backoff_ms,
                  job_timeout_ms, job_key, job_trace_parent)
          ON CONFLICT (key) WHERE state IN ('queued','running') DO NOTHING
          RETURNING id INTO added;
          IF added IS NOT NULL THEN
            RETURN added;
          END IF;
          SELECT id INTO added FROM platform.jobs WHERE key = job_key AND state IN ('queued','running');
          IF added IS NOT NULL THEN
            RETURN added;
          END IF;
        END LOOP;
        RETURN NULL;
      END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION platform.add_job(text, jsonb, smallint, timestamptz, integer, integer, integer, text, text)`);
    await new AddJob1763769601700().up(q);
    await q.query(`ALTER TABLE platform.jobs DROP COLUMN trace_parent`);
  }
}
